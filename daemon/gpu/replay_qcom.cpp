// gpu.recording = qcom: cl_qcom_recordable_queues (guide §9.1.3). The dispatches are
// enqueued once on a recordable queue between clNewRecordingQCOM and
// clEndRecordingQCOM, where they are recorded, not run; each frame replays the
// recording on the live in-order queue with clEnqueueRecordingQCOM, replacing only
// the arguments that name the frame's buffers. Every call, the core ones that carry
// the Qualcomm meaning included, goes through the vendor table.

#include <type_traits>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "gpu/replay_modes.hpp"

namespace framecl::gpu::replay_detail {
namespace {

// The one place a recording is released.
struct ReleaseRecording {
    clReleaseRecordingQCOM_fn release;
    void operator()(cl_recording_qcom recording) const { release(recording); }
};
using Recording = std::unique_ptr<std::remove_pointer_t<cl_recording_qcom>, ReleaseRecording>;

class RecordingReplay final : public Replay {
public:
    RecordingReplay(const GpuContext& gpu, uint32_t home_lane, std::vector<ReplayDispatch> dispatches,
                    cl::CommandQueue recordable, Recording recording)
        : enqueue_recording_(gpu.vendor().clEnqueueRecordingQCOM), home_lane_(home_lane), live_(gpu.lane(home_lane)),
          dispatches_(std::move(dispatches)), recordable_(std::move(recordable)), recording_(std::move(recording))
    {
    }

    RecordingMode mode() const override { return RecordingMode::Qcom; }

    Result<std::vector<cl::Event>> enqueue(const std::vector<ArgUpdate>& updates, uint32_t lane) override
    {
        if (auto bound = checkRecordingLane("Replay::enqueue", lane, home_lane_); !bound)
            return tl::unexpected(bound.error());
        if (auto checked = checkUpdates("Replay::enqueue", dispatches_, updates); !checked)
            return tl::unexpected(checked.error());
        args_.clear();
        for (const ArgUpdate& update : updates)
            args_.push_back({update.dispatch, update.arg_index, update.size, update.value.data()});

        // Guide §9.1.3: the live queue differs from the recordable one and is in order;
        // no offset or work-size changes, no wait list (the live queue orders frames).
        cl_event event = nullptr;
        const cl_int err = enqueue_recording_(live_(), recording_.get(), args_.size(), args_.data(), 0, nullptr, 0,
                                              nullptr, 0, nullptr, 0, nullptr, &event);
        if (err != CL_SUCCESS)
            return fail(clFailure("clEnqueueRecordingQCOM", err, fmt::format("{} dispatches", dispatches_.size())));
        return std::vector<cl::Event>{cl::Event(event)}; // takes the reference the enqueue returned
    }

private:
    clEnqueueRecordingQCOM_fn enqueue_recording_;
    uint32_t home_lane_;
    cl::CommandQueue live_; // the home lane
    std::vector<ReplayDispatch> dispatches_;
    // Released in reverse order of declaration: the recording before its queue.
    cl::CommandQueue recordable_;
    Recording recording_;
    std::vector<cl_array_arg_qcom> args_; // kept to build each frame's updates without allocating
};

} // namespace

Result<std::unique_ptr<Replay>> makeRecordingReplay(const GpuContext& gpu, uint32_t home_lane,
                                                    std::vector<ReplayDispatch> dispatches,
                                                    const std::vector<ArgUpdate>& initial)
{
    const VendorEntryPoints& vendor = gpu.vendor();
    const std::string object = fmt::format("{} dispatches on device '{}'", dispatches.size(), gpu.candidate().name);
    const uint64_t most = gpu.capabilities().recordable_queue_max_size;
    if (most != 0 && dispatches.size() > most)
        return fail(fmt::format("a recording holds at most {} dispatches (CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE); "
                                "this session has {}",
                                most, dispatches.size()));

    // Only the recordable bit: the recordable queue runs nothing, so profiling and
    // priority belong to the live queue.
    const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_RECORDABLE_QCOM, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue raw_queue =
        vendor.clCreateCommandQueueWithProperties(gpu.context()(), gpu.device(), properties, &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateCommandQueueWithProperties", err, object) + " with CL_QUEUE_RECORDABLE_QCOM");
    cl::CommandQueue recordable(raw_queue);

    cl_recording_qcom raw_recording = vendor.clNewRecordingQCOM(recordable(), &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clNewRecordingQCOM", err, object));
    Recording recording(raw_recording, ReleaseRecording{vendor.clReleaseRecordingQCOM});

    // A recording captures every argument as it is when the dispatch is recorded.
    if (auto set = setArguments(dispatches, initial); !set)
        return tl::unexpected(set.error());
    for (const ReplayDispatch& dispatch : dispatches) {
        // dispatch.flush_after cannot be honoured: a flush inside a recording is not recorded.
        err = vendor.clEnqueueNDRangeKernel(recordable(), dispatch.kernel(), dispatch.dims, dispatch.offset.data(),
                                            dispatch.global.data(), localSize(dispatch), 0, nullptr, nullptr);
        if (err != CL_SUCCESS)
            return fail(clFailure("clEnqueueNDRangeKernel", err, dispatch.name) + " (recording)");
    }
    err = vendor.clEndRecordingQCOM(recording.get());
    if (err != CL_SUCCESS)
        return fail(clFailure("clEndRecordingQCOM", err, object));

    return std::make_unique<RecordingReplay>(gpu, home_lane, std::move(dispatches), std::move(recordable),
                                             std::move(recording));
}

} // namespace framecl::gpu::replay_detail
