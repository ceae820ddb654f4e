#include "gpu/release_fences.hpp"

#include <algorithm>
#include <vector>

#include "gpu/cl_error.hpp"

namespace framecl::gpu {

ReleaseGate::ReleaseGate(cl_event gate, cl_semaphore_khr semaphore, clReleaseSemaphoreKHR_fn release_semaphore)
    : gate_(gate), semaphore_(semaphore), release_semaphore_(release_semaphore)
{
}

ReleaseGate::~ReleaseGate()
{
    // The signal behind it runs now; the semaphore lives on until it has.
    clSetUserEventStatus(gate_, CL_COMPLETE);
    clReleaseEvent(gate_);
    release_semaphore_(semaphore_);
}

Result<std::unique_ptr<ReleaseFences>> ReleaseFences::open(const GpuContext& gpu)
{
    const VendorEntryPoints& vendor = gpu.vendor();
    if (!gpu.capabilities().hasExtension("cl_khr_external_semaphore_sync_fd"))
        return fail("the device offers no cl_khr_external_semaphore_sync_fd");
    if (!vendor.clCreateSemaphoreWithPropertiesKHR || !vendor.clEnqueueSignalSemaphoresKHR ||
        !vendor.clGetSemaphoreHandleForTypeKHR || !vendor.clReleaseSemaphoreKHR)
        return fail("the platform does not export cl_khr_semaphore's functions");
    size_t bytes = 0;
    cl_int err = clGetDeviceInfo(gpu.device(), CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes);
    std::vector<cl_external_semaphore_handle_type_khr> exported(bytes / sizeof(cl_external_semaphore_handle_type_khr));
    if (err == CL_SUCCESS && !exported.empty())
        err = clGetDeviceInfo(gpu.device(), CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, bytes, exported.data(),
                              nullptr);
    if (err != CL_SUCCESS)
        return fail(clFailure("clGetDeviceInfo(CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR)", err));
    if (std::find(exported.begin(), exported.end(), CL_SEMAPHORE_HANDLE_SYNC_FD_KHR) == exported.end())
        return fail("the device exports no semaphore as a sync_file");
    const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue queue =
        clCreateCommandQueueWithProperties(gpu.context()(), gpu.device(), properties, &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateCommandQueueWithProperties (out of order, for release fences)", err));
    return std::unique_ptr<ReleaseFences>(new ReleaseFences(gpu, cl::CommandQueue(queue)));
}

Result<ReleaseFences::Fence> ReleaseFences::create() const
{
    const VendorEntryPoints& vendor = gpu_.vendor();
    cl_int err = CL_SUCCESS;
    const cl_device_id device = gpu_.device();
    const cl_semaphore_properties_khr properties[] = {
        CL_SEMAPHORE_TYPE_KHR,
        CL_SEMAPHORE_TYPE_BINARY_KHR,
        CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR,
        CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
        CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR,
        0}; // the context's one device is the semaphore's
    cl_semaphore_khr semaphore = vendor.clCreateSemaphoreWithPropertiesKHR(gpu_.context()(), properties, &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateSemaphoreWithPropertiesKHR", err, "a release fence"));
    cl_event gate = clCreateUserEvent(gpu_.context()(), &err);
    if (err != CL_SUCCESS) {
        vendor.clReleaseSemaphoreKHR(semaphore);
        return fail(clFailure("clCreateUserEvent", err, "a release fence's gate"));
    }
    // From here the gate owns both: whatever fails, it completes and releases them.
    auto owner = std::make_shared<ReleaseGate>(gate, semaphore, vendor.clReleaseSemaphoreKHR);
    err = vendor.clEnqueueSignalSemaphoresKHR(queue_(), 1, &semaphore, nullptr, 1, &gate, nullptr);
    if (err != CL_SUCCESS)
        return fail(clFailure("clEnqueueSignalSemaphoresKHR", err, "a release fence"));
    // Submitted now, so that opening the gate is all its signal waits for.
    clFlush(queue_());
    int fd = -1;
    err = vendor.clGetSemaphoreHandleForTypeKHR(semaphore, device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd,
                                                nullptr);
    if (err != CL_SUCCESS)
        return fail(clFailure("clGetSemaphoreHandleForTypeKHR(CL_SEMAPHORE_HANDLE_SYNC_FD_KHR)", err,
                              "a release fence"));
    return Fence{UniqueFd(fd), std::move(owner)};
}

} // namespace framecl::gpu
