#pragma once
// What a session predicts a dispatch to cost (docs/architecture.md, "Scheduling"): a
// fixed cost per tile (a launch, the device filling and draining) fitted when the
// session opens, plus nanoseconds per work item, a moving average of measured values,
// and the value its tiles were last planned with, so that a drift can be seen.

#include <cstdint>

namespace framecl::pipeline {

// Weight of a new measurement in the moving average: one frame's time moves the
// prediction a quarter of the way, so a single frame less than 5 times slower than
// predicted (another context on the GPU, a clock change) does not re-plan the tiles
// through a drift (cost_drift), while a lasting change does within a few frames.
inline constexpr double cost_smoothing = 0.25;

// Frames in a row whose tiles of a dispatch ran over the budget before the dispatch is
// re-planned at once for the slower of their measurements' least (rather than waiting
// for the average): one frame over is taken for an outlier.
inline constexpr uint32_t overruns_to_replan = 2;

// A prediction that moves this many times away from the planned value, either way,
// re-plans the dispatch's tiles (issue 6: "re-planned when it drifts by more than 2x").
inline constexpr double cost_drift = 2.0;

struct DispatchCost {
    double ns_per_item = 0;         // the prediction; 0 until seeded or measured
    double planned_ns_per_item = 0; // what the current tiles were planned with
    double fixed_ns = 0;            // each tile's cost besides its work items

    // The predicted time of a tile of `items` work items.
    double tileNs(uint64_t items) const { return fixed_ns + ns_per_item * double(items); }

    // The ns per work item that `ns` measured over `tiles` tiles of `items` work items in
    // all says, the tiles' fixed cost taken off; 0 (nothing learnt) where that leaves
    // nothing, a measurement too short to tell.
    double perItem(uint64_t ns, uint64_t tiles, uint64_t items) const;

    // Moves the prediction toward `measured` ns per item; the first measurement of an
    // unseeded dispatch is taken as it is.
    void learn(double measured);

    // Whether the prediction moved more than cost_drift times from the planned value.
    bool drifted() const;

    // Tells whether a frame's tiles of the dispatch ran over the budget, having measured
    // `measured` ns per item. On the overruns_to_replan-th frame over in a row, raises
    // the prediction to the least of those frames' measurements (if higher) and
    // returns true: the tiles are to be re-planned now.
    bool noteOverrun(bool overran, double measured);

private:
    uint32_t overrun_streak_ = 0;
    double streak_least_ = 0; // the least measurement of the frames in the streak
};

// A dispatch's cost fitted from two runs of it: `short_ns` for `short_items` work items
// and `long_ns` for `long_items` (more): the line through both, so that a tile of a few
// items is predicted with the fixed cost a per-item figure alone would spread over the
// long run (PoCL on 16 cores lost 47% of its throughput at a 2 ms budget cutting tiles
// too fine for that reason). Where the two do not make a line with a positive slope and
// intercept (noise on runs this short), the long run's ns per item with no fixed cost.
struct CostFit {
    double fixed_ns;
    double ns_per_item;
};
CostFit fitCost(uint64_t short_items, uint64_t short_ns, uint64_t long_items, uint64_t long_ns);

} // namespace framecl::pipeline
