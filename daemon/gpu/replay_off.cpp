// gpu.recording = off: nothing is recorded. Each frame sets the arguments that name its
// buffers and enqueues every dispatch on the lane it is given; the dispatches were checked
// when the session opened, so the frame does no more than that. A flush between the
// tiles of one dispatch lets a higher-priority GPU context in (guide §3.3.2).

#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "gpu/replay_modes.hpp"

namespace framecl::gpu::replay_detail {
namespace {

class ListReplay final : public Replay {
public:
    ListReplay(const GpuContext& gpu, std::vector<ReplayDispatch> dispatches)
        : dispatches_(std::move(dispatches))
    {
        for (uint32_t lane = 0; lane < gpu.lanes(); ++lane)
            lanes_.push_back(gpu.lane(lane));
    }

    RecordingMode mode() const override { return RecordingMode::Off; }

    Result<std::vector<cl::Event>> enqueue(const std::vector<ArgUpdate>& updates, uint32_t lane) override
    {
        if (lane >= lanes_.size())
            return fail(fmt::format("Replay::enqueue: lane {} of {}", lane, lanes_.size()));
        const cl::CommandQueue& queue = lanes_[lane];
        if (auto checked = checkUpdates("Replay::enqueue", dispatches_, updates); !checked)
            return tl::unexpected(checked.error());
        if (auto set = setChangedArguments(updates); !set)
            return tl::unexpected(set.error());

        std::vector<cl::Event> events;
        events.reserve(dispatches_.size());
        for (const ReplayDispatch& dispatch : dispatches_) {
            cl_event event = nullptr;
            const cl_int err = clEnqueueNDRangeKernel(queue(), dispatch.kernel(), dispatch.dims,
                                                      dispatch.offset.data(), dispatch.global.data(),
                                                      localSize(dispatch), 0, nullptr, &event);
            if (err != CL_SUCCESS)
                return fail(clFailure("clEnqueueNDRangeKernel", err, dispatch.name));
            events.emplace_back(event); // takes the reference the enqueue returned
            if (dispatch.flush_after) {
                if (const cl_int flushed = clFlush(queue()); flushed != CL_SUCCESS)
                    return fail(clFailure("clFlush", flushed, dispatch.name) + " (between tiles)");
            }
        }
        return events;
    }

private:
    // Each call into the runtime costs the event loop on every frame (docs/benchmarks.md,
    // "Many clients"), and a frame's plane offsets and strides are nearly always those
    // of the frame before. So a plain value equal to the one this replay last set on that
    // kernel is not set again: the session's kernels are set by nothing else while this
    // replay serves them (the calibration ran before; a re-plan makes a new replay), and
    // tiles or parts sharing a kernel set the same frame's values. Buffers are always
    // set: a released buffer's handle can come back naming another.
    Result<void> setChangedArguments(const std::vector<ArgUpdate>& updates)
    {
        for (const ArgUpdate& update : updates) {
            const ReplayDispatch& dispatch = dispatches_[update.dispatch];
            if (!update.buffer) {
                const auto key = std::pair{dispatch.kernel(), update.arg_index};
                const auto known = plain_values_.find(key);
                if (known != plain_values_.end() && known->second.size == update.size &&
                    std::memcmp(known->second.value.data(), update.value.data(), update.size) == 0)
                    continue;
                plain_values_[key] = update;
            }
            if (auto set = setArgument(dispatch.kernel(), dispatch.name, update); !set) {
                plain_values_.erase({dispatch.kernel(), update.arg_index}); // unknown now
                return set;
            }
        }
        return {};
    }

    std::vector<cl::CommandQueue> lanes_;
    std::vector<ReplayDispatch> dispatches_;
    std::map<std::pair<cl_kernel, cl_uint>, ArgUpdate> plain_values_; // as last set
};

} // namespace

Result<std::unique_ptr<Replay>> makeListReplay(const GpuContext& gpu, std::vector<ReplayDispatch> dispatches,
                                               const std::vector<ArgUpdate>& initial)
{
    if (auto set = setArguments(dispatches, initial); !set)
        return tl::unexpected(set.error());
    return std::make_unique<ListReplay>(gpu, std::move(dispatches));
}

} // namespace framecl::gpu::replay_detail
