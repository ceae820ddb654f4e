#include "pipeline/calibration.hpp"

#include <algorithm>
#include <cstdint>

#include "base/monotonic_clock.hpp"
#include "gpu/cl_error.hpp"
#include "pipeline/dispatch_cost.hpp"

namespace framecl::pipeline {
namespace {

// Where calibrateCost's slices go: lane 0 of `gpu`, each in its turn.
struct SliceQueue {
    const gpu::GpuContext& gpu;
    GpuTurns* turns;
};

// Enqueues `slice` of `dispatch` in its turn, predicted to take `predicted_ns` (0:
// unknown), waits for it and returns its profiled time, or on a device timed by the
// host's clock the host's time from its enqueue to the wait's end.
Result<uint64_t> timeSlice(const SliceQueue& queue, const gpu::ReplayDispatch& dispatch, const Tile& slice,
                           uint64_t predicted_ns)
{
    const bool chosen = dispatch.local[0] != 0 || dispatch.local[1] != 0;
    uint64_t enqueued_ns = 0;
    auto event = enqueueInTurn(queue.turns, queue.gpu, predicted_ns, 0, [&]() -> Result<cl::Event> {
        cl_event raw = nullptr;
        enqueued_ns = monotonicNs();
        const cl_int err = clEnqueueNDRangeKernel(queue.gpu.queue()(), dispatch.kernel(), dispatch.dims,
                                                  slice.offset.data(), slice.global.data(),
                                                  chosen ? dispatch.local.data() : nullptr, 0, nullptr, &raw);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clEnqueueNDRangeKernel", err, dispatch.name) + " (calibration)");
        return cl::Event(raw); // takes the reference the enqueue returned
    });
    if (!event)
        return tl::unexpected(event.error());
    if (const cl_int err = event->wait(); err != CL_SUCCESS)
        return fail(gpu::clFailure("clWaitForEvents", err, dispatch.name) + " (calibration)");
    if (!queue.gpu.clock().device())
        return monotonicNs() - enqueued_ns;
    const auto span = queue.gpu.profiledSpan(*event);
    return span ? span->ns() : 0;
}

// The shortest of `runs` timed runs of `slice`: a slice lasts microseconds, and one run
// that the OS preempted on a busy machine (PoCL's device is the CPU) would make the
// session predict its dispatches many times slower than they run.
Result<uint64_t> shortestOf(int runs, const SliceQueue& queue, const gpu::ReplayDispatch& dispatch,
                            const Tile& slice, uint64_t predicted_ns)
{
    uint64_t shortest = UINT64_MAX;
    for (int run = 0; run < runs; ++run) {
        auto ns = timeSlice(queue, dispatch, slice, predicted_ns);
        if (!ns)
            return ns;
        shortest = std::min(shortest, *ns);
    }
    return shortest;
}

} // namespace

std::vector<uint8_t> cameraLikeFrame(uint64_t bytes)
{
    std::vector<uint8_t> frame(bytes);
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < bytes; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        frame[i] = uint8_t(((i / 64) % 2 ? 180 : 50) + int(state & 15) - 8);
    }
    return frame;
}

Result<CostFit> calibrateCost(const gpu::GpuContext& gpu, GpuTurns* turns, const gpu::ReplayDispatch& dispatch,
                              const DispatchShape& shape, uint64_t budget_ns)
{
    const SliceQueue queue{gpu, turns};
    // A probe of one granule first, run once untimed: a driver may build the kernel for
    // its work-group size at the first enqueue (PoCL does), which no frame pays. Then
    // timed three times. Then, where the probe says more fits in half the budget, a
    // larger slice, timed twice, and the line through the two; so no calibration run
    // itself outlasts the budget by much.
    const Tile probe = calibrationSlice(shape, 1);
    auto warm_ns = timeSlice(queue, dispatch, probe, 0);
    if (!warm_ns)
        return tl::unexpected(warm_ns.error());
    auto probe_ns = shortestOf(3, queue, dispatch, probe, *warm_ns);
    if (!probe_ns)
        return tl::unexpected(probe_ns.error());
    const uint64_t probe_items = workItems(probe.global);
    const CostFit probe_only = fitCost(0, 0, probe_items, *probe_ns);
    if (!tileAxis(shape) || !(probe_only.ns_per_item > 0))
        return probe_only;
    const double fitting = 0.5 * double(budget_ns) / double(*probe_ns);
    if (fitting < 2)
        return probe_only;
    const Tile slice = calibrationSlice(shape, size_t(fitting));
    if (slice == probe)
        return probe_only;
    auto slice_ns = shortestOf(2, queue, dispatch, slice, uint64_t(double(*probe_ns) * fitting));
    if (!slice_ns)
        return tl::unexpected(slice_ns.error());
    return *slice_ns > 0 ? fitCost(probe_items, *probe_ns, workItems(slice.global), *slice_ns) : probe_only;
}

} // namespace framecl::pipeline
