// OpenCL calls that fail on demand, for a real framecld: preloaded (LD_PRELOAD), this
// library's definitions of the calls below come before the ICD loader's, and each one
// forwards to the loader unless the control file names a fault for it. The test writes
// the file while the daemon runs and the next call reads it; no fault is armed while
// the file is absent or empty.
//
// FRAMECL_OPENCL_FAULTS names the file. One fault per line; errors are OpenCL's numbers:
//   enqueue <kernel> <error>     clEnqueueNDRangeKernel of <kernel> returns <error>
//   status <kernel> <status>     events of <kernel>'s enqueues end with <status> (< 0):
//                                clGetEventInfo reports it, clWaitForEvents fails
//   create_buffer <flags> <error>  clCreateBuffer with every bit of <flags> set fails
//   lost                         the device is gone: every enqueue, clFinish and wait
//                                fails, every event ends with CL_OUT_OF_RESOURCES
// The vendor's clEnqueueCommandBufferKHR, which framecld looks up through
// clGetExtensionFunctionAddressForPlatform, is wrapped the same way for `lost`.

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Faults {
    struct KernelFault {
        std::string kernel;
        cl_int error;
    };
    std::vector<KernelFault> enqueue, status;
    cl_mem_flags create_buffer_flags = 0;
    cl_int create_buffer_error = CL_SUCCESS;
    bool lost = false;
};

// What the control file says now; read at every call, so that a test arms and disarms
// a fault with one write.
Faults current()
{
    Faults faults;
    const char* path = std::getenv("FRAMECL_OPENCL_FAULTS");
    if (!path)
        return faults;
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
        std::istringstream words(line);
        std::string what;
        words >> what;
        if (what == "enqueue" || what == "status") {
            Faults::KernelFault fault{};
            if (words >> fault.kernel >> fault.error)
                (what == "enqueue" ? faults.enqueue : faults.status).push_back(fault);
        } else if (what == "create_buffer") {
            words >> std::hex >> faults.create_buffer_flags >> std::dec >> faults.create_buffer_error;
        } else if (what == "lost") {
            faults.lost = true;
        }
    }
    return faults;
}

// Preloaded into framecld alone: PoCL runs the linker as a child process, which must
// not load this library (a sanitized build of it needs the sanitizer runtime that only
// framecld has).
__attribute__((constructor)) void stayOutOfChildren()
{
    unsetenv("LD_PRELOAD");
}

template <typename Function> Function real(const char* name)
{
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

std::string kernelName(cl_kernel kernel)
{
    char name[256] = {};
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr) != CL_SUCCESS)
        return {};
    return name;
}

// Events a `status` fault has doomed, with the status each ends with. Each is retained
// while here, so that its handle cannot be reused for another event; they are released
// when no `status` fault is armed any more.
std::mutex doomed_mutex;
std::vector<std::pair<cl_event, cl_int>> doomed;

void forgetDoomedUnlessArmed(const Faults& faults)
{
    if (!faults.status.empty())
        return;
    std::vector<std::pair<cl_event, cl_int>> released;
    {
        std::lock_guard lock(doomed_mutex);
        released.swap(doomed);
    }
    for (const auto& [event, status] : released)
        clReleaseEvent(event);
}

// The status `event` is made to end with, or CL_SUCCESS for none.
cl_int forcedStatus(const Faults& faults, cl_event event)
{
    if (faults.lost)
        return CL_OUT_OF_RESOURCES;
    std::lock_guard lock(doomed_mutex);
    for (const auto& [each, status] : doomed)
        if (each == event)
            return status;
    return CL_SUCCESS;
}

} // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                                       const size_t* offset, const size_t* global,
                                                       const size_t* local, cl_uint wait_count,
                                                       const cl_event* wait_list, cl_event* event)
{
    static const auto forward = real<decltype(&clEnqueueNDRangeKernel)>("clEnqueueNDRangeKernel");
    const Faults faults = current();
    forgetDoomedUnlessArmed(faults);
    if (faults.lost)
        return CL_OUT_OF_RESOURCES;
    const std::string name = kernelName(kernel);
    for (const auto& fault : faults.enqueue)
        if (fault.kernel == name)
            return fault.error;
    const cl_int err = forward(queue, kernel, dims, offset, global, local, wait_count, wait_list, event);
    if (err != CL_SUCCESS || !event)
        return err;
    for (const auto& fault : faults.status)
        if (fault.kernel == name) {
            clRetainEvent(*event);
            std::lock_guard lock(doomed_mutex);
            doomed.emplace_back(*event, fault.error);
        }
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info name, size_t size, void* value,
                                               size_t* size_returned)
{
    static const auto forward = real<decltype(&clGetEventInfo)>("clGetEventInfo");
    const cl_int err = forward(event, name, size, value, size_returned);
    if (err != CL_SUCCESS || name != CL_EVENT_COMMAND_EXECUTION_STATUS || size < sizeof(cl_int))
        return err;
    // Only once it has ended: a doomed command still runs on the device until then.
    if (const cl_int status = forcedStatus(current(), event); status != CL_SUCCESS && *static_cast<cl_int*>(value) == CL_COMPLETE)
        *static_cast<cl_int*>(value) = status;
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint count, const cl_event* events)
{
    static const auto forward = real<decltype(&clWaitForEvents)>("clWaitForEvents");
    const cl_int err = forward(count, events);
    const Faults faults = current();
    for (cl_uint i = 0; i < count; ++i)
        if (forcedStatus(faults, events[i]) != CL_SUCCESS)
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue queue)
{
    static const auto forward = real<decltype(&clFinish)>("clFinish");
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return forward(queue);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer, const void* pattern,
                                                    size_t pattern_size, size_t offset, size_t size,
                                                    cl_uint wait_count, const cl_event* wait_list, cl_event* event)
{
    static const auto forward = real<decltype(&clEnqueueFillBuffer)>("clEnqueueFillBuffer");
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return forward(queue, buffer, pattern, pattern_size, offset, size, wait_count, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                    size_t offset, size_t size, void* pointer, cl_uint wait_count,
                                                    const cl_event* wait_list, cl_event* event)
{
    static const auto forward = real<decltype(&clEnqueueReadBuffer)>("clEnqueueReadBuffer");
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return forward(queue, buffer, blocking, offset, size, pointer, wait_count, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                     size_t offset, size_t size, const void* pointer,
                                                     cl_uint wait_count, const cl_event* wait_list, cl_event* event)
{
    static const auto forward = real<decltype(&clEnqueueWriteBuffer)>("clEnqueueWriteBuffer");
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return forward(queue, buffer, blocking, offset, size, pointer, wait_count, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint wait_count,
                                                            const cl_event* wait_list, cl_event* event)
{
    static const auto forward = real<decltype(&clEnqueueMarkerWithWaitList)>("clEnqueueMarkerWithWaitList");
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return forward(queue, wait_count, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue queue, cl_uint wait_count,
                                                             const cl_event* wait_list, cl_event* event)
{
    static const auto forward = real<decltype(&clEnqueueBarrierWithWaitList)>("clEnqueueBarrierWithWaitList");
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return forward(queue, wait_count, wait_list, event);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host,
                                               cl_int* error)
{
    static const auto forward = real<decltype(&clCreateBuffer)>("clCreateBuffer");
    const Faults faults = current();
    if (faults.create_buffer_error != CL_SUCCESS &&
        (flags & faults.create_buffer_flags) == faults.create_buffer_flags) {
        if (error)
            *error = faults.create_buffer_error;
        return nullptr;
    }
    return forward(context, flags, size, host, error);
}

} // extern "C"

namespace {

clEnqueueCommandBufferKHR_fn vendor_enqueue_command_buffer = nullptr;

cl_int CL_API_CALL enqueueCommandBuffer(cl_uint queue_count, cl_command_queue* queues,
                                        cl_command_buffer_khr command_buffer, cl_uint wait_count,
                                        const cl_event* wait_list, cl_event* event)
{
    if (current().lost)
        return CL_OUT_OF_RESOURCES;
    return vendor_enqueue_command_buffer(queue_count, queues, command_buffer, wait_count, wait_list, event);
}

} // namespace

extern "C" CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                                  const char* name)
{
    static const auto forward =
        real<decltype(&clGetExtensionFunctionAddressForPlatform)>("clGetExtensionFunctionAddressForPlatform");
    void* function = forward(platform, name);
    if (!function || std::strcmp(name, "clEnqueueCommandBufferKHR") != 0)
        return function;
    vendor_enqueue_command_buffer = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(function);
    return reinterpret_cast<void*>(&enqueueCommandBuffer);
}
