#pragma once
// The one table through which the GPU layer calls extension functions. It is filled
// from the driver by resolveVendorEntryPoints(), or replaced in tests by an emulation
// built on core OpenCL, so that the Adreno paths run on any device (DESIGN.md, "GPU
// layer"). Code outside this file never resolves an extension function itself.

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "gpu/vendor_extensions.hpp"

namespace framecl::gpu {

// Each entry is nullptr when the platform does not export it; a capability flag says
// whether the device offers the extension, the entry says whether it can be called.
struct VendorEntryPoints {
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
};

// Looks every entry up with clGetExtensionFunctionAddressForPlatform.
VendorEntryPoints resolveVendorEntryPoints(cl_platform_id platform);

} // namespace framecl::gpu
