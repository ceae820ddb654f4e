#include "qcom_emulation.hpp"

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <CL/opencl.hpp>
#include <doctest/doctest.h>
#include <fmt/format.h>

namespace framecl::test {

namespace {

// What a cl_recording_qcom points to.
struct Recording {
    struct Dispatch {
        cl::Kernel kernel; // a clone: it holds the argument values of record time
        cl_uint dims = 0;
        bool has_offset = false;
        std::array<size_t, 3> offset{};
        std::array<size_t, 3> global{};
        bool has_local = false;
        std::array<size_t, 3> local{};
    };
    uint32_t id = 0;
    cl_command_queue queue = nullptr; // the recordable queue it records on
    bool ended = false;
    cl_uint references = 1;
    std::vector<Dispatch> dispatches;
};

} // namespace

struct QcomEmulation::State {
    std::mutex mutex;
    uint64_t onchip_bytes = 0;
    uint64_t recordable_queue_max_size = 0; // 0: no limit
    bool khr_priority_hints = false;        // offerKhrPriorityHints()
    std::set<cl_command_queue> recordable;
    std::map<cl_command_queue, Recording*> open; // the recording open on each recordable queue
    std::map<const Recording*, std::unique_ptr<Recording>> recordings; // the live ones
    EmulationLog log;

    cl_int refuse(const char* call, cl_int code, std::string what)
    {
        log.argument_errors.push_back({call, code, std::move(what)});
        return code;
    }

    Recording* find(cl_recording_qcom handle)
    {
        auto found = recordings.find(reinterpret_cast<const Recording*>(handle));
        return found == recordings.end() ? nullptr : found->second.get();
    }

    void release(Recording* recording)
    {
        if (auto open_here = open.find(recording->queue); open_here != open.end() && open_here->second == recording)
            open.erase(open_here);
        recordings.erase(recording);
    }
};

namespace {

// The one active emulation (see the header). Set and cleared while no call is in flight.
QcomEmulation::State* g_active = nullptr;

// Holds the active state locked for one call.
class ActiveState {
public:
    ActiveState() : state_(g_active)
    {
        if (state_)
            lock_ = std::unique_lock(state_->mutex);
    }
    explicit operator bool() const { return state_ != nullptr; }
    QcomEmulation::State* operator->() const { return state_; }

private:
    QcomEmulation::State* state_;
    std::unique_lock<std::mutex> lock_;
};

void setError(cl_int* errcode_ret, cl_int code)
{
    if (errcode_ret)
        *errcode_ret = code;
}

bool isPerfHint(cl_context_properties value)
{
    return value == CL_PERF_HINT_HIGH_QCOM || value == CL_PERF_HINT_NORMAL_QCOM || value == CL_PERF_HINT_LOW_QCOM;
}

bool isPriorityHint(cl_context_properties value)
{
    return value == CL_PRIORITY_HINT_HIGH_QCOM || value == CL_PRIORITY_HINT_NORMAL_QCOM ||
           value == CL_PRIORITY_HINT_LOW_QCOM;
}

// ---- the four core calls with their Qualcomm meanings ----

// Guide §9.1.1, §9.1.2: the hints are context properties. Logged as given, checked,
// and stripped before the core call, which would refuse them.
cl_context CL_API_CALL emulatedCreateContext(const cl_context_properties* properties, cl_uint num_devices,
                                             const cl_device_id* devices,
                                             void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                                             void* user_data, cl_int* errcode_ret)
{
    ActiveState state;
    if (!state) {
        setError(errcode_ret, CL_INVALID_OPERATION);
        return nullptr;
    }
    std::vector<cl_context_properties> given;
    std::vector<cl_context_properties> core;
    for (const cl_context_properties* p = properties; p && p[0] != 0; p += 2) {
        given.insert(given.end(), {p[0], p[1]});
        if (p[0] == CL_CONTEXT_PERF_HINT_QCOM || p[0] == CL_CONTEXT_PRIORITY_HINT_QCOM) {
            const bool valid = p[0] == CL_CONTEXT_PERF_HINT_QCOM ? isPerfHint(p[1]) : isPriorityHint(p[1]);
            if (!valid) {
                setError(errcode_ret, state->refuse("clCreateContext", CL_INVALID_PROPERTY,
                                                    fmt::format("hint {:#x} = {:#x}", p[0], p[1])));
                return nullptr;
            }
            continue;
        }
        core.insert(core.end(), {p[0], p[1]});
    }
    state->log.context_properties.push_back(given);
    core.push_back(0);
    return ::clCreateContext(properties ? core.data() : nullptr, num_devices, devices, notify, user_data,
                             errcode_ret);
}

// Guide §9.1.3: CL_QUEUE_RECORDABLE_QCOM makes a queue that records NDRanges. The
// emulation makes an ordinary in-order queue and remembers it.
cl_command_queue CL_API_CALL emulatedCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                                      const cl_queue_properties* properties,
                                                                      cl_int* errcode_ret)
{
    ActiveState state;
    if (!state) {
        setError(errcode_ret, CL_INVALID_OPERATION);
        return nullptr;
    }
    std::vector<cl_queue_properties> core;
    bool recordable = false;
    std::optional<cl_queue_properties> priority;
    for (const cl_queue_properties* p = properties; p && p[0] != 0; p += 2) {
        cl_queue_properties value = p[1];
        // cl_khr_priority_hints: checked and logged, then left out for the core call
        // (PoCL takes no priority; the test sees which queue asked for which).
        if (p[0] == CL_QUEUE_PRIORITY_KHR) {
            const char* call = "clCreateCommandQueueWithProperties";
            if (!state->khr_priority_hints) {
                setError(errcode_ret, state->refuse(call, CL_INVALID_VALUE,
                                                    "CL_QUEUE_PRIORITY_KHR on a device without cl_khr_priority_hints"));
                return nullptr;
            }
            if (value != CL_QUEUE_PRIORITY_HIGH_KHR && value != CL_QUEUE_PRIORITY_MED_KHR &&
                value != CL_QUEUE_PRIORITY_LOW_KHR) {
                setError(errcode_ret,
                         state->refuse(call, CL_INVALID_VALUE, fmt::format("CL_QUEUE_PRIORITY_KHR = {:#x}", value)));
                return nullptr;
            }
            priority = value;
            continue;
        }
        if (p[0] == CL_QUEUE_PROPERTIES && (value & CL_QUEUE_RECORDABLE_QCOM)) {
            recordable = true;
            value &= ~static_cast<cl_queue_properties>(CL_QUEUE_RECORDABLE_QCOM |
                                                       CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        }
        core.insert(core.end(), {p[0], value});
    }
    core.push_back(0);
    cl_command_queue queue = ::clCreateCommandQueueWithProperties(context, device, core.data(), errcode_ret);
    if (!queue)
        return nullptr;
    // A new queue may reuse the address of one released since.
    state->open.erase(queue);
    if (recordable) {
        state->recordable.insert(queue);
        state->log.recordable_queues.push_back(queue);
    } else {
        state->recordable.erase(queue);
    }
    if (priority)
        state->log.queue_priorities.push_back({queue, *priority});
    return queue;
}

// Guide §9.1.6: an on-chip buffer is placed by its creator within
// CL_DEVICE_ONCHIP_GLOBAL_MEM_SIZE_QCOM. The emulation checks the placement and makes
// an ordinary device buffer.
cl_mem CL_API_CALL emulatedCreateBufferWithProperties(cl_context context, const cl_mem_properties* properties,
                                                      cl_mem_flags flags, size_t size, void* host_ptr,
                                                      cl_int* errcode_ret)
{
    ActiveState state;
    if (!state) {
        setError(errcode_ret, CL_INVALID_OPERATION);
        return nullptr;
    }
    std::vector<cl_mem_properties> core;
    bool onchip = false;
    bool has_offset = false;
    uint64_t offset = 0;
    for (const cl_mem_properties* p = properties; p && p[0] != 0; p += 2) {
        if (p[0] == CL_MEM_ONCHIP_GLOBAL_QCOM) {
            onchip = p[1] != 0;
        }
        else if (p[0] == CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM) {
            has_offset = true;
            offset = p[1];
        } else {
            core.insert(core.end(), {p[0], p[1]});
        }
    }
    const char* call = "clCreateBufferWithProperties";
    if (!onchip) {
        if (has_offset) {
            setError(errcode_ret, state->refuse(call, CL_INVALID_PROPERTY,
                                                "CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM without CL_MEM_ONCHIP_GLOBAL_QCOM"));
            return nullptr;
        }
        return ::clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret);
    }
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
        setError(errcode_ret, state->refuse(call, CL_INVALID_VALUE, "an on-chip buffer with host memory flags"));
        return nullptr;
    }
    if (size == 0 || offset > state->onchip_bytes || size > state->onchip_bytes - offset) {
        setError(errcode_ret,
                 state->refuse(call, CL_INVALID_BUFFER_SIZE,
                               fmt::format("on-chip offset {} + size {} beyond {} bytes", offset, size,
                                           state->onchip_bytes)));
        return nullptr;
    }
    core.push_back(0);
    cl_mem buffer = ::clCreateBufferWithProperties(context, core.data(), flags, size, nullptr, errcode_ret);
    if (buffer)
        state->log.onchip_buffers.push_back({offset, size});
    return buffer;
}

// Guide §9.1.3: on a recordable queue with a recording open, an NDRange is recorded,
// not run. A recorded command has no event and waits on nothing of its own: the
// enqueue of the recording carries both.
cl_int CL_API_CALL emulatedEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                                                const size_t* global_work_offset, const size_t* global_work_size,
                                                const size_t* local_work_size, cl_uint num_events_in_wait_list,
                                                const cl_event* event_wait_list, cl_event* event)
{
    ActiveState state;
    if (!state)
        return CL_INVALID_OPERATION;
    if (!state->recordable.count(queue))
        return ::clEnqueueNDRangeKernel(queue, kernel, work_dim, global_work_offset, global_work_size,
                                        local_work_size, num_events_in_wait_list, event_wait_list, event);

    const char* call = "clEnqueueNDRangeKernel";
    auto open = state->open.find(queue);
    if (open == state->open.end())
        return state->refuse(call, CL_INVALID_OPERATION, "a recordable queue with no recording open");
    if (work_dim < 1 || work_dim > 3)
        return state->refuse(call, CL_INVALID_WORK_DIMENSION, fmt::format("work_dim {}", work_dim));
    if (!global_work_size)
        return state->refuse(call, CL_INVALID_VALUE, "no global work size");
    if (num_events_in_wait_list != 0 || event_wait_list)
        return state->refuse(call, CL_INVALID_EVENT_WAIT_LIST, "a wait list on a recorded command");
    if (event)
        return state->refuse(call, CL_INVALID_VALUE, "an event for a recorded command");

    cl_int err = CL_SUCCESS;
    cl_kernel clone = clCloneKernel(kernel, &err);
    if (err != CL_SUCCESS)
        return state->refuse(call, err, "clCloneKernel of the recorded kernel");
    Recording::Dispatch dispatch;
    dispatch.kernel = cl::Kernel(clone);
    dispatch.dims = work_dim;
    dispatch.has_offset = global_work_offset != nullptr;
    dispatch.has_local = local_work_size != nullptr;
    for (cl_uint i = 0; i < work_dim; ++i) {
        dispatch.global[i] = global_work_size[i];
        if (global_work_offset)
            dispatch.offset[i] = global_work_offset[i];
        if (local_work_size)
            dispatch.local[i] = local_work_size[i];
    }
    Recording& recording = *open->second;
    if (state->recordable_queue_max_size != 0 && recording.dispatches.size() >= state->recordable_queue_max_size)
        return state->refuse(call, CL_OUT_OF_RESOURCES,
                             fmt::format("a recording of more than CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE = {} dispatches",
                                         state->recordable_queue_max_size));
    recording.dispatches.push_back(std::move(dispatch));
    state->log.recordings[recording.id - 1].dispatches = recording.dispatches.size();
    return CL_SUCCESS;
}

// ---- cl_qcom_recordable_queues ----

cl_recording_qcom CL_API_CALL emulatedNewRecording(cl_command_queue recordable_queue, cl_int* errcode_ret)
{
    ActiveState state;
    if (!state) {
        setError(errcode_ret, CL_INVALID_OPERATION);
        return nullptr;
    }
    const char* call = "clNewRecordingQCOM";
    if (!recordable_queue) {
        setError(errcode_ret, state->refuse(call, CL_INVALID_COMMAND_QUEUE, "no queue"));
        return nullptr;
    }
    if (!state->recordable.count(recordable_queue)) {
        setError(errcode_ret, state->refuse(call, CL_INVALID_OPERATION, "a queue without CL_QUEUE_RECORDABLE_QCOM"));
        return nullptr;
    }
    if (state->open.count(recordable_queue)) {
        setError(errcode_ret, state->refuse(call, CL_INVALID_OPERATION, "a recording is already open on the queue"));
        return nullptr;
    }
    auto recording = std::make_unique<Recording>();
    recording->id = static_cast<uint32_t>(state->log.recordings.size() + 1);
    recording->queue = recordable_queue;
    state->log.recordings.push_back({recording->id, 0, false});
    Recording* handle = recording.get();
    state->recordings.emplace(handle, std::move(recording));
    state->open[recordable_queue] = handle;
    setError(errcode_ret, CL_SUCCESS);
    return reinterpret_cast<cl_recording_qcom>(handle);
}

cl_int CL_API_CALL emulatedEndRecording(cl_recording_qcom handle)
{
    ActiveState state;
    if (!state)
        return CL_INVALID_OPERATION;
    Recording* recording = state->find(handle);
    if (!recording)
        return state->refuse("clEndRecordingQCOM", CL_INVALID_VALUE, "not a recording");
    if (recording->ended)
        return state->refuse("clEndRecordingQCOM", CL_INVALID_OPERATION, "the recording has already ended");
    recording->ended = true;
    state->open.erase(recording->queue);
    state->log.recordings[recording->id - 1].ended = true;
    return CL_SUCCESS;
}

cl_int CL_API_CALL emulatedRetainRecording(cl_recording_qcom handle)
{
    ActiveState state;
    if (!state)
        return CL_INVALID_OPERATION;
    Recording* recording = state->find(handle);
    if (!recording)
        return state->refuse("clRetainRecordingQCOM", CL_INVALID_VALUE, "not a recording");
    ++recording->references;
    return CL_SUCCESS;
}

cl_int CL_API_CALL emulatedReleaseRecording(cl_recording_qcom handle)
{
    ActiveState state;
    if (!state)
        return CL_INVALID_OPERATION;
    Recording* recording = state->find(handle);
    if (!recording)
        return state->refuse("clReleaseRecordingQCOM", CL_INVALID_VALUE, "not a recording");
    if (--recording->references == 0)
        state->release(recording);
    return CL_SUCCESS;
}

// Guide §9.1.3: replays a recording on a live in-order queue, other than the recordable
// one, with arguments replaced. The updates stay on the recording's kernels, as they
// would if the driver patched the recording. Offset and work-size updates are not
// emulated (framecld does not use them) and are refused.
cl_int CL_API_CALL emulatedEnqueueRecording(cl_command_queue live_queue, cl_recording_qcom handle, size_t num_args,
                                            const cl_array_arg_qcom* args, size_t num_global_offsets,
                                            const cl_offset_qcom*, size_t num_global_workgroups,
                                            const cl_workgroup_qcom*, size_t num_local_workgroups,
                                            const cl_workgroup_qcom*, cl_uint num_events_in_wait_list,
                                            const cl_event* event_wait_list, cl_event* event)
{
    ActiveState state;
    if (!state)
        return CL_INVALID_OPERATION;
    const char* call = "clEnqueueRecordingQCOM";
    if (!live_queue)
        return state->refuse(call, CL_INVALID_COMMAND_QUEUE, "no live queue");
    if (state->recordable.count(live_queue))
        return state->refuse(call, CL_INVALID_OPERATION, "the live queue is a recordable queue");
    cl_command_queue_properties queue_properties = 0;
    if (cl_int err = clGetCommandQueueInfo(live_queue, CL_QUEUE_PROPERTIES, sizeof(queue_properties),
                                           &queue_properties, nullptr);
        err != CL_SUCCESS)
        return state->refuse(call, err, "the live queue");
    if (queue_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return state->refuse(call, CL_INVALID_OPERATION, "the live queue is out of order");

    Recording* recording = state->find(handle);
    if (!recording)
        return state->refuse(call, CL_INVALID_VALUE, "not a recording");
    if (!recording->ended)
        return state->refuse(call, CL_INVALID_OPERATION, "the recording has not ended");
    if (num_global_offsets || num_global_workgroups || num_local_workgroups)
        return state->refuse(call, CL_INVALID_OPERATION, "offset and work-size updates are not emulated");
    if (num_args && !args)
        return state->refuse(call, CL_INVALID_VALUE, "num_args without arg_array");
    if ((num_events_in_wait_list == 0) != (event_wait_list == nullptr))
        return state->refuse(call, CL_INVALID_EVENT_WAIT_LIST, "wait list and count disagree");
    for (size_t i = 0; i < num_args; ++i) {
        if (args[i].dispatch_index >= recording->dispatches.size())
            return state->refuse(call, CL_INVALID_VALUE,
                                 fmt::format("dispatch_index {} of {} recorded", args[i].dispatch_index,
                                             recording->dispatches.size()));
        if (args[i].arg_size == 0)
            return state->refuse(call, CL_INVALID_ARG_SIZE, fmt::format("arg_size 0 (update {})", i));
    }

    RecordingEnqueue logged{recording->id, live_queue, {}};
    for (size_t i = 0; i < num_args; ++i) {
        const cl_array_arg_qcom& arg = args[i];
        const cl_int err = clSetKernelArg(recording->dispatches[arg.dispatch_index].kernel(), arg.arg_index,
                                          arg.arg_size, arg.arg_value);
        if (err != CL_SUCCESS)
            return state->refuse(call, err,
                                 fmt::format("argument {} of dispatch {}", arg.arg_index, arg.dispatch_index));
        const auto* bytes = static_cast<const uint8_t*>(arg.arg_value);
        logged.updates.push_back(
            {arg.dispatch_index, arg.arg_index,
             bytes ? std::vector<uint8_t>(bytes, bytes + arg.arg_size) : std::vector<uint8_t>(arg.arg_size)});
    }

    // In order on the live queue: the first dispatch waits on the wait list, the last
    // gives the event; a marker stands for an empty recording.
    if (recording->dispatches.empty()) {
        if (cl_int err = clEnqueueMarkerWithWaitList(live_queue, num_events_in_wait_list, event_wait_list, event);
            err != CL_SUCCESS)
            return err;
    }
    for (size_t i = 0; i < recording->dispatches.size(); ++i) {
        const Recording::Dispatch& dispatch = recording->dispatches[i];
        const bool first = i == 0;
        const bool last = i + 1 == recording->dispatches.size();
        const cl_int err = ::clEnqueueNDRangeKernel(
            live_queue, dispatch.kernel(), dispatch.dims, dispatch.has_offset ? dispatch.offset.data() : nullptr,
            dispatch.global.data(), dispatch.has_local ? dispatch.local.data() : nullptr,
            first ? num_events_in_wait_list : 0, first ? event_wait_list : nullptr, last ? event : nullptr);
        if (err != CL_SUCCESS)
            return err;
    }
    state->log.recording_enqueues.push_back(std::move(logged));
    return CL_SUCCESS;
}

// ---- cl_qcom_perf_hint (guide §9.1.1) ----

cl_int CL_API_CALL emulatedSetPerfHint(cl_context context, cl_uint perf_hint)
{
    ActiveState state;
    if (!state)
        return CL_INVALID_OPERATION;
    if (!context)
        return state->refuse("clSetPerfHintQCOM", CL_INVALID_CONTEXT, "no context");
    if (!isPerfHint(perf_hint))
        return state->refuse("clSetPerfHintQCOM", CL_INVALID_VALUE, fmt::format("perf hint {:#x}", perf_hint));
    state->log.perf_hints.push_back(perf_hint);
    return CL_SUCCESS;
}

void addExtension(gpu::Capabilities& caps, const char* name)
{
    if (!caps.hasExtension(name))
        caps.extensions.emplace_back(name);
}

} // namespace

QcomEmulation::QcomEmulation() : state_(std::make_unique<State>())
{
    REQUIRE_MESSAGE(g_active == nullptr, "one QcomEmulation at a time");
    g_active = state_.get();
}

QcomEmulation::~QcomEmulation()
{
    g_active = nullptr;
}

gpu::VendorEntryPoints QcomEmulation::entryPoints(const gpu::VendorEntryPoints& real) const
{
    gpu::VendorEntryPoints table = real;
    table.clCreateContext = emulatedCreateContext;
    table.clCreateCommandQueueWithProperties = emulatedCreateCommandQueueWithProperties;
    table.clCreateBufferWithProperties = emulatedCreateBufferWithProperties;
    table.clEnqueueNDRangeKernel = emulatedEnqueueNDRangeKernel;
    table.clSetPerfHintQCOM = emulatedSetPerfHint;
    table.clNewRecordingQCOM = emulatedNewRecording;
    table.clEndRecordingQCOM = emulatedEndRecording;
    table.clRetainRecordingQCOM = emulatedRetainRecording;
    table.clReleaseRecordingQCOM = emulatedReleaseRecording;
    table.clEnqueueRecordingQCOM = emulatedEnqueueRecording;
    return table;
}

gpu::Capabilities QcomEmulation::emulatedCapabilities(gpu::Capabilities real, uint64_t onchip_bytes)
{
    {
        std::lock_guard lock(state_->mutex);
        state_->onchip_bytes = onchip_bytes;
        real.recordable_queue_max_size = state_->recordable_queue_max_size;
        real.khr_priority_hints = state_->khr_priority_hints;
    }
    real.recordable_queues = true;
    real.onchip_global_memory = true;
    real.onchip_global_memory_size = onchip_bytes;
    real.qcom_perf_hint = true;
    real.qcom_priority_hint = true;
    if (real.khr_priority_hints)
        addExtension(real, "cl_khr_priority_hints");
    addExtension(real, "cl_qcom_recordable_queues");
    addExtension(real, "cl_qcom_onchip_global_memory");
    addExtension(real, "cl_qcom_perf_hint");
    addExtension(real, "cl_qcom_priority_hint");
    return real;
}

void QcomEmulation::offerKhrPriorityHints()
{
    std::lock_guard lock(state_->mutex);
    state_->khr_priority_hints = true;
}

void QcomEmulation::setRecordableQueueMaxSize(uint64_t dispatches)
{
    std::lock_guard lock(state_->mutex);
    state_->recordable_queue_max_size = dispatches;
}

std::unique_ptr<gpu::GpuContext> QcomEmulation::openGpu(uint64_t onchip_bytes, const config::GpuConfig& config)
{
    const std::vector<gpu::DeviceCandidate> candidates = gpu::enumerateDevices();
    const auto chosen = gpu::chooseDevice(candidates, config.device);
    REQUIRE_MESSAGE(chosen.has_value(), (chosen ? "" : chosen.error().message));
    const gpu::DeviceCandidate& candidate = candidates[*chosen];
    auto gpu = gpu::openGpu(candidate, emulatedCapabilities(gpu::readCapabilities(candidate.device), onchip_bytes),
                            entryPoints(gpu::resolveVendorEntryPoints(candidate.platform)), config);
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

const EmulationLog& QcomEmulation::log() const
{
    return state_->log;
}

} // namespace framecl::test
