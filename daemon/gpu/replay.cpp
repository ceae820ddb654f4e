#include "gpu/replay.hpp"

#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "gpu/replay_modes.hpp"

namespace framecl::gpu {
namespace {

// Whether `vendor` holds what `mode` calls.
bool exported(RecordingMode mode, const VendorEntryPoints& vendor)
{
    switch (mode) {
    case RecordingMode::Qcom:
        return vendor.clNewRecordingQCOM && vendor.clEndRecordingQCOM && vendor.clReleaseRecordingQCOM &&
               vendor.clEnqueueRecordingQCOM;
    case RecordingMode::Khr:
        return vendor.clCreateCommandBufferKHR && vendor.clFinalizeCommandBufferKHR &&
               vendor.clReleaseCommandBufferKHR && vendor.clEnqueueCommandBufferKHR &&
               vendor.clCommandNDRangeKernelKHR;
    case RecordingMode::Off:
        break;
    }
    return true;
}

// Why `mode` cannot be used, or empty if it can. `vendor` is nullptr for a device
// judged by its capability record alone.
std::string missing(RecordingMode mode, const Capabilities& caps, const VendorEntryPoints* vendor)
{
    if (mode == RecordingMode::Off)
        return {};
    const bool offered = mode == RecordingMode::Qcom ? caps.recordable_queues : caps.command_buffer;
    const char* extension = mode == RecordingMode::Qcom ? "cl_qcom_recordable_queues" : "cl_khr_command_buffer";
    if (!offered)
        return fmt::format("the device has no {}", extension);
    if (vendor && !exported(mode, *vendor))
        return fmt::format("the driver exports no {} entry points", extension);
    return {};
}

RecordingMode choose(const Capabilities& caps, const VendorEntryPoints* vendor, config::RecordingMode wanted,
                     std::string* why)
{
    if (why)
        why->clear();
    const RecordingMode first = missing(RecordingMode::Qcom, caps, vendor).empty()  ? RecordingMode::Qcom
                                : missing(RecordingMode::Khr, caps, vendor).empty() ? RecordingMode::Khr
                                                                                    : RecordingMode::Off;
    RecordingMode asked = RecordingMode::Off;
    switch (wanted) {
    case config::RecordingMode::Auto:
        // Neither recording: say so where it is chosen (framecld logs it at start).
        if (why && first == RecordingMode::Off)
            *why = fmt::format("gpu.recording = auto: {}, and {}; each dispatch is enqueued every frame",
                               missing(RecordingMode::Qcom, caps, vendor), missing(RecordingMode::Khr, caps, vendor));
        return first;
    case config::RecordingMode::Off:
        return RecordingMode::Off;
    case config::RecordingMode::Qcom:
        asked = RecordingMode::Qcom;
        break;
    case config::RecordingMode::Khr:
        asked = RecordingMode::Khr;
        break;
    }
    const std::string reason = missing(asked, caps, vendor);
    if (reason.empty())
        return asked;
    if (why)
        *why = fmt::format("gpu.recording = {}: {}; using {}", recordingModeName(asked), reason,
                           recordingModeName(first));
    return first;
}

} // namespace

const char* recordingModeName(RecordingMode mode)
{
    switch (mode) {
    case RecordingMode::Qcom:
        return "qcom";
    case RecordingMode::Khr:
        return "khr";
    case RecordingMode::Off:
        break;
    }
    return "off";
}

RecordingMode chooseRecordingMode(const Capabilities& caps, const VendorEntryPoints& vendor,
                                  config::RecordingMode wanted, std::string* why)
{
    return choose(caps, &vendor, wanted, why);
}

RecordingMode chooseRecordingMode(const Capabilities& caps, config::RecordingMode wanted, std::string* why)
{
    return choose(caps, nullptr, wanted, why);
}

Result<std::unique_ptr<Replay>> makeReplay(RecordingMode mode, const GpuContext& gpu, uint32_t home_lane,
                                           std::vector<ReplayDispatch> dispatches,
                                           const std::vector<ArgUpdate>& initial)
{
    if (home_lane >= gpu.lanes())
        return fail(fmt::format("makeReplay: lane {} of {}", home_lane, gpu.lanes()));
    // A null entry would crash at the first frame; refuse while the session opens.
    if (!exported(mode, gpu.vendor()))
        return fail(fmt::format("recording mode {}: the vendor table of device '{}' lacks its entry points",
                                recordingModeName(mode), gpu.candidate().name));
    if (auto checked = replay_detail::checkUpdates("makeReplay", dispatches, initial); !checked)
        return tl::unexpected(checked.error());

    switch (mode) {
    case RecordingMode::Qcom:
        return replay_detail::makeRecordingReplay(gpu, home_lane, std::move(dispatches), initial);
    case RecordingMode::Khr:
        return replay_detail::makeCommandBufferReplay(gpu, home_lane, std::move(dispatches), initial);
    case RecordingMode::Off:
        break;
    }
    return replay_detail::makeListReplay(gpu, std::move(dispatches), initial);
}

namespace replay_detail {

Result<void> checkUpdates(const char* call, const std::vector<ReplayDispatch>& dispatches,
                          const std::vector<ArgUpdate>& updates)
{
    for (const ArgUpdate& update : updates) {
        if (update.dispatch >= dispatches.size())
            return fail(fmt::format("{}: an argument update names dispatch {} of {}", call, update.dispatch,
                                    dispatches.size()));
        if (update.size == 0 || update.size > update.value.size())
            return fail(fmt::format("{}: {}: argument {} update of {} bytes (1 to {} allowed)", call,
                                    dispatches[update.dispatch].name, update.arg_index, update.size,
                                    update.value.size()));
        if (update.buffer && update.size != sizeof(cl_mem))
            return fail(fmt::format("{}: {}: argument {} is a buffer but its update holds {} bytes, not a cl_mem",
                                    call, dispatches[update.dispatch].name, update.arg_index, update.size));
    }
    return {};
}

Result<void> checkRecordingLane(const char* call, uint32_t lane, uint32_t home_lane)
{
    if (lane != home_lane)
        return fail(fmt::format("{}: a recording replays on lane {}, for which it was made, not lane {}", call,
                                home_lane, lane));
    return {};
}

Result<void> setArgument(cl_kernel kernel, const std::string& name, const ArgUpdate& update)
{
    // The C call, not cl::Kernel::setArg: with OpenCL >= 2.0 opencl.hpp takes a
    // pointer-typed value (a cl_mem) for an SVM pointer.
    const cl_int err = clSetKernelArg(kernel, update.arg_index, update.size, update.value.data());
    if (err != CL_SUCCESS)
        return fail(clFailure("clSetKernelArg", err, name) + fmt::format(" argument {}", update.arg_index));
    return {};
}

Result<void> setArguments(const std::vector<ReplayDispatch>& dispatches, const std::vector<ArgUpdate>& updates)
{
    for (const ArgUpdate& update : updates) {
        const ReplayDispatch& dispatch = dispatches[update.dispatch];
        if (auto set = setArgument(dispatch.kernel(), dispatch.name, update); !set)
            return set;
    }
    return {};
}

} // namespace replay_detail
} // namespace framecl::gpu
