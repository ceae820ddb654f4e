#pragma once
// Whose work the GPU takes next: deficit round robin (Shreedhar and Varghese, 1996) over
// GPU time instead of bytes, with the sparse-flow priority of FQ-CoDel (RFC 8290, §4.2).
// Each client with frames waiting holds a place in a list and a deficit in nanoseconds
// of GPU time; when its turn comes it is credited `quantum x weight`, and it keeps the
// turn while its deficit is positive. The caller charges each part of a frame as it
// goes on the GPU (its predicted time) and corrects the charge when the part has run,
// so a client whose frames cost ten times more starts a tenth as many: both get the
// same GPU time, and weights 3:1 give 3:1. Frames of one client stay in their order:
// a client's front frame stays at the front until the caller pops it.
//
// A client that had nothing waiting joins the list of new clients, which is served
// before the others: a client sending a light frame now and then (a camera preview)
// goes next instead of waiting a round behind the ones that flood. It leaves that list
// once its credit is spent or its frames are, for the back of the old list, so that
// nothing gains by arriving often. A debt is kept across (a costly frame is paid for
// even by a bursty client), so a client in debt is new only in name.
//
// Not thread-safe: the scheduler's thread owns it.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <vector>

namespace framecl::scheduler {

template <typename Frame> class FairQueue {
public:
    using ClientId = uint64_t;

    // `quantum_ns`: the credit per turn at weight 1. Work costing more than it takes
    // several turns to pay for, which only delays that client's next; about one
    // typical part keeps the rounds short.
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
        new_.remove(client);
        old_.remove(client);
        return waiting;
    }

    void push(ClientId client, Frame frame)
    {
        Client& c = clients_.at(client);
        c.waiting.push_back(std::move(frame));
        if (c.list == List::None) {
            c.list = List::New;
            c.deficit_ns = std::min<int64_t>(c.deficit_ns, 0) + int64_t(quantum_ns_ * c.weight);
            c.credited = true;
            new_.push_back(client);
        }
    }

    // The client whose turn it is to put work on the GPU, or none when none has frames
    // waiting that `may_go(client)` allows now. A client it refuses is passed over for
    // one turn (it keeps its credit, and a new one joins the old); refused again with
    // that credit unspent, it holds everyone else back until it may go, so that a
    // client the caller refuses while others keep the GPU busy is not starved. The
    // caller takes the work from front(), charges it, and pops the frame once it is all
    // on the GPU; the client keeps its turn while its deficit is positive.
    template <typename MayGo> std::optional<ClientId> choose(MayGo may_go)
    {
        for (auto it = new_.begin(); it != new_.end();) {
            const ClientId id = *it;
            Client& c = clients_.at(id);
            if (!c.waiting.empty() && c.deficit_ns > 0 && may_go(id))
                return id;
            // Spent, refused, or its frames were dropped: to the back of the old
            // clients, where an empty one leaves at its turn.
            it = new_.erase(it);
            c.list = List::Old;
            c.credited = !c.waiting.empty() && c.deficit_ns > 0; // refused: that was its turn's credit
            old_.push_back(id);
        }
        // Each pass over the old list credits every client once; a client still in debt
        // after a pass waits for the next. Two passes more than the deepest debt needs
        // would be wasted, so the credit of several passes is given at once.
        for (size_t examined = 0, pass_size = old_.size(); !old_.empty(); ++examined) {
            if (examined == pass_size) {
                if (!creditPasses(may_go))
                    return std::nullopt;
                examined = 0;
                pass_size = old_.size();
            }
            const ClientId id = old_.front();
            Client& c = clients_.at(id);
            if (c.waiting.empty()) {
                // DRR: a client with nothing waiting leaves and keeps no credit (a debt
                // it keeps).
                old_.pop_front();
                c.list = List::None;
                c.deficit_ns = std::min<int64_t>(c.deficit_ns, 0);
                pass_size = old_.size();
                examined = size_t(-1);
                continue;
            }
            if (!c.credited) {
                c.deficit_ns += int64_t(quantum_ns_ * c.weight);
                c.credited = true;
            }
            if (c.deficit_ns > 0) {
                if (may_go(id))
                    return id;
                if (c.deficit_ns > int64_t(quantum_ns_ * c.weight))
                    return std::nullopt; // passed over once already: the others wait with it
            }
            // Its turn is over: to the back, credited again next time round.
            c.credited = false;
            old_.splice(old_.end(), old_, old_.begin());
        }
        return std::nullopt;
    }
    std::optional<ClientId> choose()
    {
        return choose([](ClientId) { return true; });
    }

    // The client's oldest waiting frame; it has one.
    Frame& front(ClientId client) { return clients_.at(client).waiting.front(); }

    // Removes the client's oldest waiting frame, all of it on the GPU now.
    void pop(ClientId client) { clients_.at(client).waiting.pop_front(); }

    // Work of `client` costs `gpu_ns` more (less, when negative: a correction) of GPU time.
    void charge(ClientId client, int64_t gpu_ns)
    {
        if (auto it = clients_.find(client); it != clients_.end())
            it->second.deficit_ns -= gpu_ns;
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

    // Calls `visit` on every waiting frame, client by client, each client's oldest first.
    template <typename Visit> void forEachWaiting(Visit visit) const
    {
        for (const auto& [id, c] : clients_)
            for (const Frame& frame : c.waiting)
                visit(frame);
    }

    // Moves every waiting frame that `match`es to `out`, client by client, each client's
    // oldest first; the others stay in their order.
    template <typename Match> void extractWaiting(Match match, std::vector<Frame>& out)
    {
        for (auto& [id, c] : clients_) {
            std::deque<Frame> kept;
            for (Frame& frame : c.waiting) {
                if (match(frame))
                    out.push_back(std::move(frame));
                else
                    kept.push_back(std::move(frame));
            }
            c.waiting = std::move(kept);
        }
    }

    size_t waitingCount() const
    {
        size_t count = 0;
        for (const auto& [id, c] : clients_)
            count += c.waiting.size();
        return count;
    }

private:
    enum class List { None, New, Old };
    struct Client {
        uint32_t weight = 1;
        int64_t deficit_ns = 0;
        List list = List::None;
        bool credited = false; // this turn's quantum given
        std::deque<Frame> waiting;
    };

    // After a pass over the old list in which no client could go: credits every client
    // there enough passes at once for the least indebted that may go to reach a
    // positive deficit. False when none may go.
    template <typename MayGo> bool creditPasses(MayGo may_go)
    {
        std::optional<uint64_t> passes;
        for (ClientId id : old_) {
            const Client& c = clients_.at(id);
            if (c.waiting.empty() || !may_go(id))
                continue;
            const uint64_t per_pass = quantum_ns_ * c.weight;
            const uint64_t needed = c.deficit_ns > 0 ? 0 : (uint64_t(-c.deficit_ns) / per_pass + 1);
            passes = std::min(passes.value_or(needed), needed);
        }
        if (!passes)
            return false;
        for (ClientId id : old_) {
            Client& c = clients_.at(id);
            c.deficit_ns += int64_t(*passes * quantum_ns_ * c.weight);
            c.credited = true;
        }
        return true;
    }

    uint64_t quantum_ns_;
    std::map<ClientId, Client> clients_;
    std::list<ClientId> new_; // clients that had nothing waiting, served first
    std::list<ClientId> old_; // the others with frames waiting, in turn order
};

} // namespace framecl::scheduler
