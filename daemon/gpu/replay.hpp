#pragma once
// How a session's dispatches run each frame (docs/architecture.md, "A frame's path"): recorded once
// and replayed, with only the arguments that name the frame's buffers changed.
//   qcom — cl_qcom_recordable_queues: recorded on a recordable queue, replayed with
//          clEnqueueRecordingQCOM and cl_array_arg_qcom updates (guide §9.1);
//   khr  — cl_khr_command_buffer: with mutable dispatch, one command buffer updated
//          per frame; without, one finalized command buffer per set of frame
//          arguments, kept in a small LRU (clients rotate small buffer pools) with a
//          reference to each buffer it names;
//   off  — a pre-validated list: set the changed arguments, enqueue each dispatch.
// All three give the same bytes.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "config/config.hpp"
#include "gpu/capabilities.hpp"
#include "gpu/context.hpp"

namespace framecl::gpu {

enum class RecordingMode { Qcom, Khr, Off };

// "qcom", "khr", "off"
const char* recordingModeName(RecordingMode mode);

// `auto`: the first of qcom, khr, off that the device offers and whose entry points
// `vendor` holds. A mode the device lacks falls back the same way, and `why` (if
// given) says so: "gpu.recording = qcom: the device has no cl_qcom_recordable_queues;
// using khr"; `auto` that finds neither recording says why too. It is left empty when
// the wanted mode is taken. What a session uses.
RecordingMode chooseRecordingMode(const Capabilities& caps, const VendorEntryPoints& vendor,
                                  config::RecordingMode wanted, std::string* why = nullptr);

// The same by the capability record alone, for reports on devices that are not
// opened (`framecld --list-devices`): a driver is taken to export what it advertises.
RecordingMode chooseRecordingMode(const Capabilities& caps, config::RecordingMode wanted, std::string* why = nullptr);

// One dispatch of a session, its kernel's arguments all set except the frame's.
struct ReplayDispatch {
    std::string name;  // for errors: "stage 2 (sobel): sobel_3x3"
    cl::Kernel kernel; // owned with the session
    cl_uint dims = 2;
    std::array<size_t, 2> global{};
    std::array<size_t, 2> local{}; // {0, 0}: the runtime chooses
    // The global work offset: a tile of a larger dispatch starts here (kernels index
    // with get_global_id, which includes it).
    std::array<size_t, 2> offset{};
    // Flush the queue after this dispatch so that a higher-priority GPU context can run
    // before the next one (guide §3.3.2): set between the tiles of one dispatch. Only
    // the off mode can honour it; a recording is enqueued as a whole.
    bool flush_after = false;
    // The kernel's __local arguments (index, bytes), set again on each clone of it: PoCL
    // 3.1's clCloneKernel points a __local argument's value into its argument storage,
    // and recording the clone then copies the local size from there (a heap overflow
    // ASan found). Setting them again is valid OpenCL on every device.
    std::vector<std::pair<cl_uint, size_t>> local_args;
};

// One frame-dependent kernel argument: a buffer handle, a plane offset or a stride.
struct ArgUpdate {
    uint32_t dispatch;
    cl_uint arg_index;
    size_t size;                  // at most 8
    std::array<uint8_t, 8> value; // the first `size` bytes
    // `value` is a cl_mem. A runtime may give a released handle to the next buffer it
    // creates, so a replay that keeps what it recorded for this handle (khr without
    // mutable dispatch) holds a reference to it for as long.
    bool buffer;
};

class Replay {
public:
    virtual ~Replay() = default;
    virtual RecordingMode mode() const = 0;

    // Runs every dispatch once, with `updates` applied, on the GPU's lane `lane`
    // (GpuContext::lane): off takes any lane; a recording is bound to the lane it was
    // made for and refuses another. Returns at once with the events to wait on and profile: one
    // per dispatch (off), or one for the whole recording (qcom, khr), in which case
    // per-dispatch times are not measured.
    virtual Result<std::vector<cl::Event>> enqueue(const std::vector<ArgUpdate>& updates, uint32_t lane) = 0;

    // Drops what was recorded for these arguments alone, and the references to the
    // buffers they name, once its enqueues have completed: for the one mode that keeps
    // a recording per set of frame arguments (khr without mutable dispatch). The others
    // hold nothing per set.
    virtual void forget(const std::vector<ArgUpdate>&) {}
};

// Records `dispatches` for `mode` on `gpu`, to be replayed on its lane `home_lane` (the
// live in-order queue; off replays on any).
// `initial` sets every frame-dependent argument once, since a recording captures all
// arguments at record time. Fails with the OpenCL call and code if the device refuses,
// and without calling anything if `gpu.vendor()` lacks the mode's entry points or an
// update names a dispatch that does not exist or holds more than 8 bytes. The Replay
// keeps what it needs of `gpu` (queue, context, entry points) alive itself; the
// kernels are shared with `dispatches`, so their arguments must not be changed by
// others while the Replay still enqueues frames (frames already enqueued keep what
// they ran with, so a Replay recorded anew may bind them while the old one's frames
// finish). Several dispatches may share a kernel (the tiles of one dispatch). Each
// frame's updates should name the same arguments as `initial`; the modes do not agree
// on what an argument left out holds.
Result<std::unique_ptr<Replay>> makeReplay(RecordingMode mode, const GpuContext& gpu, uint32_t home_lane,
                                           std::vector<ReplayDispatch> dispatches,
                                           const std::vector<ArgUpdate>& initial);

} // namespace framecl::gpu
