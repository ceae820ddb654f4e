#pragma once
// The short calibration that seeds a session's cost predictions when it opens with a
// kernel-time budget (docs/architecture.md, "Scheduling"): each dispatch run on a slice of its tile
// axis (tile_plan.hpp, calibrationSlice) and timed by its profiling event, or by the
// host's clock where the device's timestamps are unusable (gpu/timestamps.hpp).

#include <cstdint>
#include <vector>

#include "base/result.hpp"
#include "gpu/context.hpp"
#include "gpu/replay.hpp"
#include "pipeline/dispatch_cost.hpp"
#include "pipeline/gpu_turns.hpp"
#include "pipeline/tile_plan.hpp"

namespace framecl::pipeline {

// `bytes` of what a camera gives a filter at its costliest: flat areas (bands of two
// levels, 64 bytes wide) under a sensor's small noise (±8), in which a data-dependent
// filter such as a mean shift finds every neighbour in range; uniform noise would make
// it look four times cheaper than a camera frame does. Fixed seed: the same each time.
std::vector<uint8_t> cameraLikeFrame(uint64_t bytes);

// The cost of `dispatch`, of shape `shape`, whose every argument is set, frame buffers
// included: calibration slices of two sizes, each kept within `budget_ns`, run on
// `gpu`'s first lane (a profiling queue), each in its turn (`turns`, null: at once), and
// waited for, and fitted (fitCost). Where only one size
// fits, or the dispatch cannot be cut, its ns per work item alone. Zero when the events
// carry no profiling or the slices were too short for the device clock. Fails with the
// OpenCL call and the dispatch's name.
Result<CostFit> calibrateCost(const gpu::GpuContext& gpu, GpuTurns* turns, const gpu::ReplayDispatch& dispatch,
                              const DispatchShape& shape, uint64_t budget_ns);

} // namespace framecl::pipeline
