// gpu.recording = off: nothing is recorded. Each frame sets the arguments that name its
// buffers and enqueues every dispatch on the lane it is given; the dispatches were checked
// when the session opened, so the frame does no more than that. A flush between the
// tiles of one dispatch lets a higher-priority GPU context in (guide §3.3.2).

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
        if (auto set = setArguments(dispatches_, updates); !set)
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
    std::vector<cl::CommandQueue> lanes_;
    std::vector<ReplayDispatch> dispatches_;
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
