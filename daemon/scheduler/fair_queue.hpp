#pragma once
// Which client's frame the GPU takes next: deficit round robin (Shreedhar and Varghese,
// 1996) over measured GPU time instead of bytes. Each client with frames waiting holds
// a place in the round and a deficit in nanoseconds of GPU time; when its turn comes it
// is credited `quantum x weight`, and it may start frames while its deficit is
// positive. Each frame's GPU time is charged when it is known (after the frame ran), so
// a client whose frames cost ten times more starts a tenth as many: both get the same
// GPU time, and weights 3:1 give 3:1. Frames of one client stay in their order.
//
// Not thread-safe: the scheduler's thread owns it.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>

namespace framecl::scheduler {

template <typename Frame> class FairQueue {
public:
    using ClientId = uint64_t;

    // `quantum_ns`: the credit per turn at weight 1. A frame costing more than it takes
    // several turns to pay for, which only delays that client's next frame; about one
    // typical frame keeps the rounds short.
    explicit FairQueue(uint64_t quantum_ns) : quantum_ns_(std::max<uint64_t>(quantum_ns, 1)) {}

    void addClient(ClientId client, uint32_t weight) { clients_[client].weight = std::max<uint32_t>(weight, 1); }

    // Forgets the client and its waiting frames (they are returned for their Done).
    std::deque<Frame> removeClient(ClientId client)
    {
        std::deque<Frame> waiting;
        if (auto it = clients_.find(client); it != clients_.end()) {
            waiting = std::move(it->second.waiting);
            clients_.erase(it);
        }
        round_.remove(client);
        return waiting;
    }

    void push(ClientId client, Frame frame)
    {
        Client& c = clients_.at(client);
        c.waiting.push_back(std::move(frame));
        if (c.waiting.size() == 1 && !c.in_round) {
            c.in_round = true;
            c.credited = false;
            round_.push_back(client);
        }
    }

    // The next frame to start and its client, or nothing when no frame waits.
    // `may_start(client)` says whether the client may start one now (its frames in
    // flight are under the limit); a client that may not keeps its place.
    template <typename MayStart> std::optional<std::pair<ClientId, Frame>> next(MayStart may_start)
    {
        // Each pass over the round credits every client once; a client still in debt
        // after a pass waits for the next. Two passes more than the deepest debt needs
        // would be wasted, so the credit of several passes is given at once.
        for (size_t examined = 0, pass_size = round_.size(); !round_.empty(); ++examined) {
            if (examined == pass_size) {
                if (!creditPasses(may_start))
                    return std::nullopt;
                examined = 0;
                pass_size = round_.size();
            }
            const ClientId id = round_.front();
            Client& c = clients_.at(id);
            if (c.waiting.empty()) { // its frames were dropped meanwhile
                leaveRound(id, c);
                pass_size = round_.size();
                examined = size_t(-1);
                continue;
            }
            if (!c.credited) {
                c.deficit_ns += int64_t(quantum_ns_ * c.weight);
                c.credited = true;
            }
            if (c.deficit_ns > 0 && may_start(id)) {
                Frame frame = std::move(c.waiting.front());
                c.waiting.pop_front();
                if (c.waiting.empty())
                    leaveRound(id, c);
                return std::make_pair(id, std::move(frame));
            }
            // Its turn is over: to the back, credited again next time round.
            c.credited = false;
            round_.splice(round_.end(), round_, round_.begin());
        }
        return std::nullopt;
    }

    // A frame of `client` took `gpu_ns` of GPU time.
    void charge(ClientId client, uint64_t gpu_ns)
    {
        if (auto it = clients_.find(client); it != clients_.end())
            it->second.deficit_ns -= int64_t(gpu_ns);
    }

    // Frames waiting for `client`, oldest first (for backpressure and deadlines).
    std::deque<Frame>* waiting(ClientId client)
    {
        auto it = clients_.find(client);
        return it == clients_.end() ? nullptr : &it->second.waiting;
    }
    const std::deque<Frame>* waiting(ClientId client) const
    {
        auto it = clients_.find(client);
        return it == clients_.end() ? nullptr : &it->second.waiting;
    }

    size_t waitingCount() const
    {
        size_t count = 0;
        for (const auto& [id, c] : clients_)
            count += c.waiting.size();
        return count;
    }

private:
    struct Client {
        uint32_t weight = 1;
        int64_t deficit_ns = 0;
        bool in_round = false;
        bool credited = false; // this turn's quantum given
        std::deque<Frame> waiting;
    };

    void leaveRound(ClientId id, Client& c)
    {
        // DRR: a client with nothing waiting leaves the round and keeps no credit (a
        // debt it keeps, so that a costly frame is paid for even by a bursty client).
        c.in_round = false;
        c.deficit_ns = std::min<int64_t>(c.deficit_ns, 0);
        round_.remove(id);
    }

    // After a pass in which no client could start: credits every client that may start
    // enough passes at once for the least indebted to reach a positive deficit. False
    // when none may start.
    template <typename MayStart> bool creditPasses(MayStart may_start)
    {
        std::optional<uint64_t> passes;
        for (ClientId id : round_) {
            const Client& c = clients_.at(id);
            if (!may_start(id))
                continue;
            const uint64_t per_pass = quantum_ns_ * c.weight;
            const uint64_t needed = c.deficit_ns > 0 ? 0 : (uint64_t(-c.deficit_ns) / per_pass + 1);
            passes = std::min(passes.value_or(needed), needed);
        }
        if (!passes)
            return false;
        for (ClientId id : round_) {
            Client& c = clients_.at(id);
            c.deficit_ns += int64_t(*passes * quantum_ns_ * c.weight);
            c.credited = true;
        }
        return true;
    }

    uint64_t quantum_ns_;
    std::map<ClientId, Client> clients_;
    std::list<ClientId> round_; // clients with frames waiting, in turn order
};

} // namespace framecl::scheduler
