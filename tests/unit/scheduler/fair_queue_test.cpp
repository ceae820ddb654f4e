// The deficit round robin of daemon/scheduler/fair_queue.hpp on a simulated GPU: one
// frame at a time, each taking its cost of simulated time, charged when it completes.
// Every client is always backlogged, so only the scheduler decides the shares.
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
        auto picked = queue.next([](uint64_t) { return true; });
        REQUIRE(picked);
        const auto [client, frame] = *picked;
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

TEST_CASE("a client that may not start keeps its place; one with nothing queued leaves the round")
{
    FairQueue<int> queue(1000);
    queue.addClient(1, 1);
    queue.addClient(2, 1);
    queue.push(1, 10);
    queue.push(1, 11);
    queue.push(2, 20);
    // Client 1 is at its in-flight limit: client 2 goes, then nothing can start.
    auto picked = queue.next([](uint64_t client) { return client != 1; });
    REQUIRE(picked);
    CHECK(picked->first == 2);
    CHECK(picked->second == 20);
    CHECK_FALSE(queue.next([](uint64_t client) { return client != 1; }));
    // Once it may, its frames come in order.
    CHECK(queue.next([](uint64_t) { return true; })->second == 10);
    CHECK(queue.next([](uint64_t) { return true; })->second == 11);
    CHECK_FALSE(queue.next([](uint64_t) { return true; }));
    CHECK(queue.waitingCount() == 0);

    // Removing a client hands back its waiting frames.
    queue.push(2, 21);
    queue.push(2, 22);
    CHECK(queue.removeClient(2) == std::deque<int>{21, 22});
    CHECK_FALSE(queue.next([](uint64_t) { return true; }));
}
