// The deficit round robin of daemon/scheduler/fair_queue.hpp on a simulated GPU: one
// frame at a time, each taking its cost of simulated time, charged as it starts.
// Every client is always backlogged, so only the scheduler decides the shares; then
// clients that arrive now and then, and frames taken in parts.
#include <map>
#include <vector>

#include <doctest/doctest.h>

#include "scheduler/fair_queue.hpp"

using framecl::scheduler::FairQueue;

namespace {

struct SimFrame {
    uint64_t cost_ns;
    uint64_t sequence;
};

struct Share {
    uint64_t gpu_ns = 0;
    uint64_t frames = 0;
};

// Runs `duration_ns` of simulated GPU time for clients given as (weight, frame cost);
// each client keeps `backlog` frames queued. Returns each client's GPU time and frames.
std::vector<Share> simulate(const std::vector<std::pair<uint32_t, uint64_t>>& clients, uint64_t duration_ns,
                            uint64_t quantum_ns, size_t backlog = 4)
{
    FairQueue<SimFrame> queue(quantum_ns);
    std::vector<uint64_t> next_sequence(clients.size(), 0);
    for (size_t c = 0; c < clients.size(); ++c) {
        queue.addClient(c, clients[c].first);
        for (size_t i = 0; i < backlog; ++i)
            queue.push(c, {clients[c].second, next_sequence[c]++});
    }
    std::vector<Share> shares(clients.size());
    uint64_t clock_ns = 0;
    while (clock_ns < duration_ns) {
        const auto picked = queue.choose();
        REQUIRE(picked);
        const uint64_t client = *picked;
        const SimFrame frame = queue.front(client);
        queue.pop(client);
        CHECK(frame.sequence == shares[client].frames); // each client's frames in order
        clock_ns += frame.cost_ns;
        queue.charge(client, frame.cost_ns);
        shares[client].gpu_ns += frame.cost_ns;
        ++shares[client].frames;
        queue.push(client, {clients[client].second, next_sequence[client]++}); // still backlogged
    }
    return shares;
}

double fraction(const std::vector<Share>& shares, size_t client)
{
    uint64_t total = 0;
    for (const auto& share : shares)
        total += share.gpu_ns;
    return double(shares[client].gpu_ns) / double(total);
}

} // namespace

TEST_CASE("two clients whose frames cost 10:1 each get half of the GPU")
{
    // 10 ms and 1 ms frames, 10 simulated seconds, quantum 1 ms.
    const auto shares = simulate({{1, 10'000'000}, {1, 1'000'000}}, 10'000'000'000, 1'000'000);
    CHECK(fraction(shares, 0) == doctest::Approx(0.5).epsilon(0.1));
    CHECK(fraction(shares, 1) == doctest::Approx(0.5).epsilon(0.1));
    // Equal time means ten times the frames for the cheap client.
    CHECK(double(shares[1].frames) / double(shares[0].frames) == doctest::Approx(10).epsilon(0.1));
}

TEST_CASE("weights 3:1 give GPU time 3:1, whatever the frames cost")
{
    for (const auto& costs : std::vector<std::pair<uint64_t, uint64_t>>{{1'000'000, 1'000'000},
                                                                         {10'000'000, 1'000'000},
                                                                         {1'000'000, 10'000'000}}) {
        CAPTURE(costs.first);
        CAPTURE(costs.second);
        const auto shares = simulate({{3, costs.first}, {1, costs.second}}, 20'000'000'000, 2'000'000);
        CHECK(double(shares[0].gpu_ns) / double(shares[1].gpu_ns) == doctest::Approx(3).epsilon(0.1));
    }
}

TEST_CASE("a quantum far below the frame cost still shares fairly, without spinning")
{
    // Frames of 10 ms against a 1 µs quantum: each turn needs thousands of credits,
    // given in one step.
    const auto shares = simulate({{1, 10'000'000}, {2, 3'000'000}, {1, 500'000}}, 30'000'000'000, 1'000);
    CHECK(fraction(shares, 0) == doctest::Approx(0.25).epsilon(0.1));
    CHECK(fraction(shares, 1) == doctest::Approx(0.5).epsilon(0.1));
    CHECK(fraction(shares, 2) == doctest::Approx(0.25).epsilon(0.1));
}

TEST_CASE("a client with nothing waiting goes before the backlogged ones, but gains nothing by arriving often")
{
    FairQueue<int> queue(1'000'000);
    queue.addClient(1, 1);
    queue.addClient(2, 1);
    for (int i = 0; i < 4; ++i)
        queue.push(1, 10 + i);
    // Client 1 floods with 0.4 ms parts: new at first, it spends its first credit and
    // joins the old clients, where it has a turn again.
    for (int part = 0; part < 4; ++part) {
        REQUIRE(queue.choose() == 1u);
        queue.charge(1, 400'000);
    }
    // Client 2's frame comes: it goes next, though client 1's credit is not spent.
    queue.push(2, 20);
    REQUIRE(queue.choose() == 2u);
    CHECK(queue.front(2) == 20);
    queue.pop(2);
    queue.charge(2, 100'000);
    CHECK(queue.choose() == 1u);

    // A client whose frame costs 10 ms and that sends the next only after each ends
    // (so it has nothing waiting each time) still gets only half of the GPU beside a
    // flooding client of 1 ms frames.
    FairQueue<int> fair(1'000'000);
    fair.addClient(1, 1);
    fair.addClient(2, 1);
    for (int i = 0; i < 4; ++i)
        fair.push(1, 1);
    fair.push(2, 2);
    std::map<uint64_t, uint64_t> gpu_ns;
    for (int step = 0; step < 20000; ++step) {
        const auto picked = fair.choose();
        REQUIRE(picked);
        const uint64_t cost = *picked == 1 ? 1'000'000 : 10'000'000;
        fair.pop(*picked);
        fair.charge(*picked, int64_t(cost));
        gpu_ns[*picked] += cost;
        fair.push(*picked, int(*picked)); // client 1 stays backlogged; client 2 sends its next
    }
    CHECK(double(gpu_ns[2]) / double(gpu_ns[1]) == doctest::Approx(1).epsilon(0.1));
}

TEST_CASE("a frame charged part by part, its predictions corrected as the parts end, shares as a whole one")
{
    // Client 1's frames run as 10 parts predicted at 1 ms each that take 2 ms; client
    // 2's as one part of 2 ms, predicted right. The corrections make it 1:1 in time.
    FairQueue<int> queue(1'000'000);
    queue.addClient(1, 1);
    queue.addClient(2, 1);
    for (int i = 0; i < 2; ++i) {
        queue.push(1, 0);
        queue.push(2, 0);
    }
    std::map<uint64_t, uint64_t> gpu_ns;
    for (int step = 0; step < 50000; ++step) {
        const auto picked = queue.choose();
        REQUIRE(picked);
        const bool heavy = *picked == 1;
        const int64_t predicted = heavy ? 1'000'000 : 2'000'000;
        queue.charge(*picked, predicted);
        queue.charge(*picked, 2'000'000 - predicted); // it ended
        gpu_ns[*picked] += 2'000'000;
        int& parts = queue.front(*picked);
        if (++parts == (heavy ? 10 : 1)) {
            queue.pop(*picked);
            queue.push(*picked, 0);
        }
    }
    CHECK(double(gpu_ns[1]) / double(gpu_ns[2]) == doctest::Approx(1).epsilon(0.1));
}

TEST_CASE("a client's frames come in order; one with nothing queued leaves the round")
{
    FairQueue<int> queue(1000);
    queue.addClient(1, 1);
    queue.addClient(2, 1);
    queue.push(1, 10);
    queue.push(1, 11);
    queue.push(2, 20);
    std::vector<int> order;
    while (const auto picked = queue.choose()) {
        order.push_back(queue.front(*picked));
        queue.pop(*picked);
        queue.charge(*picked, 1200); // more than the quantum: a turn each
    }
    CHECK(order == std::vector<int>{10, 20, 11});
    CHECK(queue.waitingCount() == 0);

    // Removing a client hands back its waiting frames.
    queue.push(2, 21);
    queue.push(2, 22);
    CHECK(queue.removeClient(2) == std::deque<int>{21, 22});
    CHECK_FALSE(queue.choose());
}

TEST_CASE("a client refused while the GPU is busy is passed over once, then the others wait with it")
{
    // Client 1's parts (10 ms) may go only on an idle GPU; client 2's (0.2 ms) whenever.
    // Were client 1 merely skipped, client 2 would keep the GPU busy and starve it.
    FairQueue<int> queue(1'000'000);
    queue.addClient(1, 1);
    queue.addClient(2, 1);
    for (int i = 0; i < 4; ++i) {
        queue.push(1, 1);
        queue.push(2, 2);
    }
    std::map<uint64_t, uint64_t> gpu_ns;
    bool idle = true;
    int passed_over = 0;
    for (int step = 0; step < 20000; ++step) {
        const auto picked = queue.choose([&](uint64_t client) { return client == 2 || idle; });
        if (!picked) {
            idle = true; // the caller waits for the GPU to drain
            continue;
        }
        passed_over += !idle && *picked == 2 && queue.waiting(1)->size() > 0;
        const uint64_t cost = *picked == 1 ? 10'000'000 : 200'000;
        queue.charge(*picked, int64_t(cost));
        gpu_ns[*picked] += cost;
        queue.pop(*picked);
        queue.push(*picked, int(*picked));
        idle = false;
    }
    CHECK(passed_over > 0);
    CHECK(double(gpu_ns[1]) / double(gpu_ns[2]) == doctest::Approx(1).epsilon(0.15));
}
