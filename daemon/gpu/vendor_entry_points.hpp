#pragma once
// The one table through which the GPU layer calls extension functions. It is filled
// from the driver by resolveVendorEntryPoints(), or replaced in tests by an emulation
// built on core OpenCL, so that the Adreno paths run on any device
// (docs/architecture.md, "Plugins and pipelines"). Code outside this file never resolves an extension function itself.

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "gpu/vendor_extensions.hpp"

namespace framecl::gpu {

// Each extension entry is nullptr when the platform does not export it; a capability
// flag says whether the device offers the extension, the entry says whether it can be
// called.
struct VendorEntryPoints {
    // Core functions to which the Qualcomm extensions give vendor meanings: context
    // properties carry the perf and priority hints (guide §9.1.1, §9.1.2), a queue
    // property makes a queue recordable and an NDRange enqueued on it is recorded, not
    // run (§9.1.3), buffer properties place a buffer on-chip (§9.1.6). They go through
    // the table so that an emulation sees, checks and strips those properties and
    // records those enqueues. They are always the core functions unless replaced, also
    // in a default-constructed table. clEnqueueNDRangeKernel is used only to record on
    // a recordable queue; ordinary dispatches call the core function.
    decltype(&::clCreateContext) clCreateContext = ::clCreateContext;
    decltype(&::clCreateCommandQueueWithProperties) clCreateCommandQueueWithProperties =
        ::clCreateCommandQueueWithProperties;
    decltype(&::clCreateBufferWithProperties) clCreateBufferWithProperties = ::clCreateBufferWithProperties;
    decltype(&::clEnqueueNDRangeKernel) clEnqueueNDRangeKernel = ::clEnqueueNDRangeKernel;

    // cl_qcom_perf_hint (guide §9.1.1)
    clSetPerfHintQCOM_fn clSetPerfHintQCOM = nullptr;

    // cl_qcom_recordable_queues (guide §9.1.3)
    clNewRecordingQCOM_fn clNewRecordingQCOM = nullptr;
    clEndRecordingQCOM_fn clEndRecordingQCOM = nullptr;
    clReleaseRecordingQCOM_fn clReleaseRecordingQCOM = nullptr;
    clRetainRecordingQCOM_fn clRetainRecordingQCOM = nullptr;
    clEnqueueRecordingQCOM_fn clEnqueueRecordingQCOM = nullptr;

    // cl_khr_command_buffer (+ _mutable_dispatch): the fallback for recordings.
    clCreateCommandBufferKHR_fn clCreateCommandBufferKHR = nullptr;
    clFinalizeCommandBufferKHR_fn clFinalizeCommandBufferKHR = nullptr;
    clReleaseCommandBufferKHR_fn clReleaseCommandBufferKHR = nullptr;
    clEnqueueCommandBufferKHR_fn clEnqueueCommandBufferKHR = nullptr;
    clCommandNDRangeKernelKHR_fn clCommandNDRangeKernelKHR = nullptr;
    clUpdateMutableCommandsKHR_fn clUpdateMutableCommandsKHR = nullptr;

    // cl_khr_external_memory: a buffer imported from a dma-buf is acquired before the
    // commands that use it and released after them.
    clEnqueueAcquireExternalMemObjectsKHR_fn clEnqueueAcquireExternalMemObjectsKHR = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn clEnqueueReleaseExternalMemObjectsKHR = nullptr;

    // cl_khr_semaphore with cl_khr_external_semaphore_sync_fd: release fences
    // (gpu/release_fences.hpp).
    clCreateSemaphoreWithPropertiesKHR_fn clCreateSemaphoreWithPropertiesKHR = nullptr;
    clEnqueueSignalSemaphoresKHR_fn clEnqueueSignalSemaphoresKHR = nullptr;
    clGetSemaphoreHandleForTypeKHR_fn clGetSemaphoreHandleForTypeKHR = nullptr;
    clReleaseSemaphoreKHR_fn clReleaseSemaphoreKHR = nullptr;
};

// Looks every extension entry up with clGetExtensionFunctionAddressForPlatform; the
// core entries keep the core functions.
VendorEntryPoints resolveVendorEntryPoints(cl_platform_id platform);

} // namespace framecl::gpu
