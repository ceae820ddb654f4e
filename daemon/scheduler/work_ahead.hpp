#pragma once
// What the GPU's lanes hold, as the scheduler predicts it: every part enqueued and not
// yet seen to end, with its predicted time, and when the last part seen to end ended.
// From it the scheduler reads how much predicted work runs ahead of a priority rank
// (it feeds a rank while that is within the lead), which lane a part should take, and
// whether the GPU is busy for a rank (docs/architecture.md, "Scheduling").
//
// Each part starts when the one before it on its lane ends (a lane is an in-order
// queue) or when it was enqueued, whichever is later, the first no earlier than the
// last part seen to end; one predicted to have ended already is taken to end now. A
// part without a prediction counts as the whole lead, so that nothing more is fed
// behind it until it is seen to end.
//
// Not thread-safe: the scheduler's thread owns it.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace framecl::scheduler {

// How far ahead of the GPU the scheduler keeps it fed, in predicted time: the next part
// goes on the GPU's queue while what is there is predicted to end within this. Long
// enough that the GPU does not idle while the host hears of a part's end and wakes to
// enqueue the next (docs/benchmarks.md, "A frame's hops"); short, since a frame of
// another client that comes waits behind all of it (and one part more). A quarter of
// the kernel-time budget where that is less.
uint64_t feedLeadNs(double kernel_budget_ms);

// The longest part that goes on the GPU's queue behind work still running there; a
// longer one (or one without a prediction) waits until the GPU is seen to have
// finished. Queued early, a part makes another client's frame that comes meanwhile wait
// for all of it; held back, it leaves the GPU idle while the host hears of the end
// before it, which is small beside a part this long.
inline constexpr uint64_t prefetch_limit_ns = 4'000'000;

class WorkAhead {
public:
    struct Part {
        uint64_t frame;     // its owner's serial: a frame in flight, or a piece of an opening
        uint64_t client_id; // whose work it is
        size_t part;        // its index in the frame, or a marker of its owner's
        uint32_t lane;
        uint64_t predicted_ns; // 0: unknown
        uint64_t enqueued_ns;  // CLOCK_MONOTONIC
        bool last;             // its frame ends with it
    };
    struct Ended {
        Part part;
        // From the later of its enqueue and the end of the part seen to end before it,
        // to its end: the time it had the GPU, as the host saw it.
        uint64_t held_ns;
    };

    // `lane_ranks`: the priority rank of each lane (gpu::GpuContext::laneRank), 0 first.
    WorkAhead(std::vector<uint32_t> lane_ranks, uint64_t lead_ns);

    uint64_t leadNs() const { return lead_ns_; }
    void setLeadNs(uint64_t lead_ns) { lead_ns_ = lead_ns; }

    // Notes a part enqueued; returns the serial its completion is to be reported by.
    uint64_t add(const Part& part);
    // The part of `serial` on the GPU; null where it ended (with its frame's last part).
    // Valid until the next change.
    const Part* find(uint64_t serial) const;
    // Part `serial` was seen to end at `ended_ns`; none where it is not known (ended
    // already with its frame's last part).
    std::optional<Ended> complete(uint64_t serial, uint64_t ended_ns);
    // The serials of the parts of `frame` on the GPU but `serial`, in order enqueued.
    std::vector<uint64_t> otherParts(uint64_t frame, uint64_t serial) const;
    // Forgets every part: the GPU was lost, and nothing on it will be seen to end.
    void clear() { parts_.clear(); }

    bool empty() const { return parts_.empty(); }
    // Whether work runs before rank `rank`'s (on lanes of that rank or before).
    bool busy(uint32_t rank) const;
    // The predicted time until the GPU runs out of the parts that run before work of
    // rank `rank`, from `now_ns`.
    uint64_t aheadNs(uint64_t now_ns, uint32_t rank) const;
    // Of `lanes` (at least one), the lane whose work is predicted to end first.
    uint32_t laneFor(const std::vector<uint32_t>& lanes, uint64_t now_ns) const;

private:
    struct Queued {
        uint64_t serial;
        Part part;
    };
    uint64_t predictedNs(const Part& part) const { return part.predicted_ns ? part.predicted_ns : lead_ns_; }

    std::vector<uint32_t> lane_ranks_;
    uint64_t lead_ns_;
    std::deque<Queued> parts_;     // enqueued and not yet seen to end, in order enqueued
    uint64_t last_end_ns_ = 0;     // when the last part seen to end ended
    uint64_t next_serial_ = 1;
};

} // namespace framecl::scheduler
