#include "pipeline/calibration.hpp"

#include <algorithm>
#include <cstdint>

#include "gpu/cl_error.hpp"
#include "pipeline/dispatch_cost.hpp"

namespace framecl::pipeline {
namespace {

// Enqueues `slice` of `dispatch` on `queue`, waits for it and returns its profiled time.
Result<uint64_t> timeSlice(const cl::CommandQueue& queue, const gpu::ReplayDispatch& dispatch, const Tile& slice)
{
    const bool chosen = dispatch.local[0] != 0 || dispatch.local[1] != 0;
    cl_event raw = nullptr;
    cl_int err = clEnqueueNDRangeKernel(queue(), dispatch.kernel(), dispatch.dims, slice.offset.data(),
                                        slice.global.data(), chosen ? dispatch.local.data() : nullptr, 0, nullptr,
                                        &raw);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueNDRangeKernel", err, dispatch.name) + " (calibration)");
    const cl::Event event(raw); // takes the reference the enqueue returned
    if (err = event.wait(); err != CL_SUCCESS)
        return fail(gpu::clFailure("clWaitForEvents", err, dispatch.name) + " (calibration)");
    const auto span = profiledSpan(event);
    return span ? span->ns() : 0;
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

Result<double> calibrateNsPerItem(const cl::CommandQueue& queue, const gpu::ReplayDispatch& dispatch,
                                  const DispatchShape& shape, uint64_t budget_ns)
{
    // A probe of one granule first, run once untimed: a driver may build the kernel for
    // its work-group size at the first enqueue (PoCL does), which no frame pays. Then
    // timed three times, the shortest kept: a probe lasts microseconds, and one run
    // that the OS preempted on a busy machine (PoCL's device is the CPU) would make the
    // session predict its dispatches many times slower than they run. Then, where the
    // probe says more fits in half the budget, a larger slice for a steadier figure; so
    // no calibration run itself outlasts the budget by much.
    const Tile probe = calibrationSlice(shape, 1);
    if (auto warm = timeSlice(queue, dispatch, probe); !warm)
        return tl::unexpected(warm.error());
    uint64_t probe_ns = UINT64_MAX;
    for (int run = 0; run < 3; ++run) {
        auto ns = timeSlice(queue, dispatch, probe);
        if (!ns)
            return tl::unexpected(ns.error());
        probe_ns = std::min(probe_ns, *ns);
    }
    const double probe_items = double(workItems(probe.global));
    const double per_item = double(probe_ns) / probe_items;
    if (!tileAxis(shape) || !(per_item > 0))
        return per_item;
    const double fitting = 0.5 * double(budget_ns) / (per_item * probe_items);
    if (fitting < 2)
        return per_item;
    const Tile slice = calibrationSlice(shape, size_t(fitting));
    if (slice == probe)
        return per_item;
    auto slice_ns = timeSlice(queue, dispatch, slice);
    if (!slice_ns)
        return tl::unexpected(slice_ns.error());
    return *slice_ns > 0 ? double(*slice_ns) / double(workItems(slice.global)) : per_item;
}

} // namespace framecl::pipeline
