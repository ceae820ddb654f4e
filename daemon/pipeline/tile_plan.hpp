#pragma once
// The geometry of the kernel-time budget (docs/architecture.md, "Scheduling"): how a dispatch whose
// plan marks an axis tileable is cut into tiles along that axis (and across it too,
// where both are tileable and bands alone are too slow), each a dispatch of its own
// with a global work offset, so that each tile's predicted time stays under a target.
// Pure functions: no OpenCL call, no clock.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace framecl::pipeline {

// A dispatch as the session runs it whole: its global size already rounded up to its
// local size, and the plugin's framecl_dispatch.tileable_axes.
struct DispatchShape {
    uint32_t dims = 2;
    std::array<size_t, 2> global{};
    std::array<size_t, 2> local{}; // {0, 0}: the runtime chooses
    uint32_t tileable_axes = 0;    // FRAMECL_AXIS_X, FRAMECL_AXIS_Y
};

// One part of a dispatch: its global work offset and size.
struct Tile {
    std::array<size_t, 2> offset{};
    std::array<size_t, 2> global{};

    bool operator==(const Tile&) const = default;
};

// Rows (or columns) that a tile's extent is a multiple of when the dispatch leaves its
// work-group size to the runtime: small enough to split finely, large enough that the
// runtime can still choose a useful work-group along that axis.
inline constexpr size_t default_tile_granule = 8;

// The axis a dispatch is cut along: Y (1) where the plan allows it, so that a tile reads
// and writes whole rows as the whole dispatch does; else X (0); none when neither is
// tileable (a one-dimensional dispatch has only X).
std::optional<size_t> tileAxis(const DispatchShape& shape);

// The axis a band along tileAxis() is cut across when even bands of one granule are
// predicted over the target (a slow device, a costly kernel): X, where the tile axis is
// Y and the plan marks X tileable too; none otherwise.
std::optional<size_t> crossAxis(const DispatchShape& shape);

// Work items of `global` (the product of its extents).
uint64_t workItems(const std::array<size_t, 2>& global);

// The extent that every tile but the last is a multiple of along `axis`: the local size
// there; when the runtime chooses, default_tile_granule, or a single row (column) where
// a dispatch predicted at `predicted_ns` would put more than `target_ns` in one granule
// (a slow device: the budget before the work-group's efficiency).
size_t tileGranule(const DispatchShape& shape, size_t axis, double predicted_ns = 0, double target_ns = 0);

// The time a session plans each tile to take under a kernel-time budget: 85% of it.
// The margin absorbs what the plan cannot see — the tiles' granules not dividing
// evenly, and a prediction that lags a frame or two behind — while costing at most
// about one tile in six more than the fewest that could fit, each tile adding a launch
// and a flush (the benchmark's targets: the longest dispatch within 1.25x of the budget
// and throughput within 10% of untiled).
inline constexpr double budget_target_fraction = 0.85;
constexpr double tileTarget(uint64_t budget_ns)
{
    return double(budget_ns) * budget_target_fraction;
}

// The time a tile's work items may take under `target_ns` when each tile also costs
// `fixed_ns` besides them (DispatchCost): the target less that cost, but at least a
// quarter of the target, so that a fixed cost near the target does not cut a dispatch
// into ever finer tiles that each pay it again (such tiles run over the target
// whatever their size).
constexpr double tileWorkTarget(double target_ns, double fixed_ns)
{
    return target_ns - fixed_ns > target_ns / 4 ? target_ns - fixed_ns : target_ns / 4;
}

// The most tiles one dispatch is cut into, whatever its prediction: each tile is a
// dispatch to record, enqueue and profile, and a prediction gone wild (a frame slowed
// by something else on the machine) must not make a session record hundreds of
// thousands. A dispatch that would need more runs its tiles over the target. (Mean
// shift at 3264x2448 on two CPU cores under a 2 ms budget needs some 3000.)
inline constexpr size_t max_tiles_per_dispatch = 4096;

// How many tiles a dispatch predicted to take `predicted_ns` (its work spread evenly)
// needs so that each takes at most `target_ns`: bands along its tile axis of as many
// whole granules as fit under the target; where not even one fits, a band per granule,
// each cut the same way into columns along the cross axis, if there is one. At most one
// tile per granule (or granule cell), and at most max_tiles_per_dispatch (fewer bands,
// then fewer columns per band): past that a tile runs over the target. 1 for a
// dispatch that cannot be cut, predicted within the target, or a target of 0.
// With `min_items` > 0, no more tiles than leave each about that many work items (see
// fillItems).
uint32_t tileCount(const DispatchShape& shape, double predicted_ns, double target_ns, uint64_t min_items = 0);

// The dispatch cut into tileCount() tiles, band by band and column by column within a
// band (memory order): along each axis the granules shared out evenly (the first parts
// take one more where they do not divide), every extent a multiple of the granule but
// the last, which ends at the dispatch's end. One tile, the whole dispatch, when it is
// not cut.
std::vector<Tile> planTiles(const DispatchShape& shape, double predicted_ns, double target_ns,
                            uint64_t min_items = 0);

// The work items a tile needs to keep a GPU of `compute_units` busy: two work groups of
// `max_work_group_size` per compute unit, so that while the slowest groups of a tile
// finish, others still run (issue 14 measured 18 bands of a 1080p mean shift, each a
// third of what the H100 holds at once, taking twice the GPU time of the whole
// dispatch: each band waits for its slowest group with most of the device idle). 0 for
// a CPU, whose few cores any tile of a few groups fills.
uint64_t fillItems(bool gpu, uint32_t compute_units, size_t max_work_group_size);

// Consecutive recorded dispatches (tiles) [first, end) enqueued as one unit: the
// scheduler may put another client's work between two parts, never inside one
// (docs/architecture.md, "Scheduling").
struct PartRange {
    uint32_t first = 0;
    uint32_t end = 0;

    bool operator==(const PartRange&) const = default;
};

// Whether a part may end between two recorded dispatches: `No` where an on-chip
// intermediate is alive across, `Must` between two runs of stages placed apart.
enum class Cut { No, May, Must };

// A session's recorded dispatches, predicted at `tile_ns` each in order, grouped into
// parts: a part takes the next tile while the sum stays within `target_ns`, and a new
// part starts before a tile t where `cuts[t]` is May and the sum would pass the target,
// or is Must (cuts[0] is not read). A tile over the target alone, or a run that may not
// be cut, makes a part over it. A target of 0 (no kernel-time budget) cuts only where
// it must. With `max_tiles` (a qcom recording's capacity; 0: none), a part also ends
// where it holds that many, if it may.
std::vector<PartRange> planParts(const std::vector<double>& tile_ns, const std::vector<Cut>& cuts,
                                 double target_ns, uint32_t max_tiles = 0);

// The part a session times at open to seed the prediction (calibration): about an eighth
// of the tile axis and at most `at_most_granules` granules, a multiple of the granule and
// at least one, from the middle of the frame (away from borders, whose handling may cost
// more or less); the whole dispatch when it cannot be cut.
Tile calibrationSlice(const DispatchShape& shape, size_t at_most_granules = SIZE_MAX);

} // namespace framecl::pipeline
