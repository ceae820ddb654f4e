#pragma once
// The Qualcomm entry points (guide §9.1) emulated on core OpenCL, so that the Adreno
// paths run in CI on PoCL: recordable queues and recordings (§9.1.3), on-chip global
// memory (§9.1.6), the perf hint (§9.1.1) and the context hints (§9.1.1, §9.1.2); and,
// where a test asks, per-queue priorities (cl_khr_priority_hints) beside them.
// The emulation checks arguments the way the guide and the ABI in
// shared/reference/qcom-extensions.md describe, and logs every call for tests to
// inspect.
//
// Use: construct one, open the device with openGpu() below (or gpu::openGpu with
// emulatedCapabilities() and entryPoints()), and release every OpenCL object made
// through it before the emulation is destroyed.
//
// The entry points are plain C function pointers and carry no user data, so the state
// lives in the one active instance: constructing a second QcomEmulation while one is
// alive fails the test, and calling an emulated entry point while none is alive
// returns CL_INVALID_OPERATION. Calls may come from several threads; read log() only
// while none is in flight.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "gpu/capabilities.hpp"
#include "gpu/context.hpp"
#include "gpu/vendor_entry_points.hpp"

namespace framecl::test {

// One cl_array_arg_qcom of a clEnqueueRecordingQCOM call, its value copied.
struct EmulatedArgUpdate {
    cl_uint dispatch_index = 0;
    cl_uint arg_index = 0;
    std::vector<uint8_t> value; // arg_size bytes
};

struct EmulatedRecording {
    uint32_t id = 0;         // 1, 2, ... in order of clNewRecordingQCOM
    size_t dispatches = 0;   // NDRanges recorded so far
    bool ended = false;
};

// A clEnqueueRecordingQCOM call that passed the checks.
struct RecordingEnqueue {
    uint32_t recording = 0; // EmulatedRecording::id
    cl_command_queue live_queue = nullptr;
    std::vector<EmulatedArgUpdate> updates;
};

struct OnchipBuffer {
    uint64_t offset = 0;
    uint64_t size = 0;
};

// A call the emulation refused, as the driver would: the call, the code, what was wrong.
struct ArgumentError {
    std::string call;
    cl_int code = CL_SUCCESS;
    std::string what;
};

// A queue created with CL_QUEUE_PRIORITY_KHR.
struct QueuePriority {
    cl_command_queue queue = nullptr;
    cl_queue_properties priority = 0; // CL_QUEUE_PRIORITY_{HIGH,MED,LOW}_KHR
};

struct EmulationLog {
    // Each clCreateContext's properties as given, without the terminating 0.
    std::vector<std::vector<cl_context_properties>> context_properties;
    std::vector<cl_command_queue> recordable_queues; // created with CL_QUEUE_RECORDABLE_QCOM
    std::vector<QueuePriority> queue_priorities;      // in order of creation
    std::vector<EmulatedRecording> recordings;
    std::vector<RecordingEnqueue> recording_enqueues;
    std::vector<OnchipBuffer> onchip_buffers; // created on-chip, in order
    std::vector<cl_uint> perf_hints;          // clSetPerfHintQCOM values, in order
    std::vector<ArgumentError> argument_errors;
};

class QcomEmulation {
public:
    QcomEmulation();
    ~QcomEmulation();
    QcomEmulation(const QcomEmulation&) = delete;
    QcomEmulation& operator=(const QcomEmulation&) = delete;

    // `real` (the table resolved from the driver, for its cl_khr_command_buffer
    // entries) with the Qualcomm entries replaced by the emulation's and the four core
    // entries by wrappers that give them their Qualcomm meanings.
    gpu::VendorEntryPoints entryPoints(const gpu::VendorEntryPoints& real = gpu::VendorEntryPoints{}) const;

    // `real` plus what an Adreno device reports: recordable queues, `onchip_bytes` of
    // on-chip global memory, the Qualcomm perf and priority hints, and their extension
    // names. `onchip_bytes` is also the size on-chip buffers are checked against.
    gpu::Capabilities emulatedCapabilities(gpu::Capabilities real, uint64_t onchip_bytes);

    // Reports CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE as `dispatches` in the capabilities
    // opened after this call, and refuses a recorded NDRange past it (0, the default:
    // no limit, as PoCL answers nothing to the query).
    void setRecordableQueueMaxSize(uint64_t dispatches);

    // Offers cl_khr_priority_hints in the capabilities opened after this call: a queue
    // may then carry CL_QUEUE_PRIORITY_KHR, which is checked, logged and left out of
    // the core call (PoCL runs every queue alike). Without it the property is refused,
    // as a driver lacking the extension would.
    void offerKhrPriorityHints();

    // The device `config.device` picks, opened as an Adreno with `onchip_bytes` of
    // on-chip memory: its real capabilities and driver table, emulated as above.
    // Fails the test if it cannot be opened.
    std::unique_ptr<gpu::GpuContext> openGpu(uint64_t onchip_bytes, const config::GpuConfig& config = {});

    const EmulationLog& log() const;

    // The emulation's state, shared with the entry points; defined in the .cpp.
    struct State;

private:
    std::unique_ptr<State> state_;
};

} // namespace framecl::test
