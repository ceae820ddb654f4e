#include "gpu/vendor_entry_points.hpp"

namespace framecl::gpu {
namespace {

// The platform-scoped lookup, not clGetExtensionFunctionAddress: with several ICDs
// installed the latter may hand back another vendor's function.
template <typename Function>
void resolve(cl_platform_id platform, const char* name, Function& entry)
{
    entry = reinterpret_cast<Function>(clGetExtensionFunctionAddressForPlatform(platform, name));
}

} // namespace

VendorEntryPoints resolveVendorEntryPoints(cl_platform_id platform)
{
    VendorEntryPoints table;
#define FRAMECL_RESOLVE(name) resolve(platform, #name, table.name)
    FRAMECL_RESOLVE(clSetPerfHintQCOM);
    FRAMECL_RESOLVE(clNewRecordingQCOM);
    FRAMECL_RESOLVE(clEndRecordingQCOM);
    FRAMECL_RESOLVE(clReleaseRecordingQCOM);
    FRAMECL_RESOLVE(clRetainRecordingQCOM);
    FRAMECL_RESOLVE(clEnqueueRecordingQCOM);
    FRAMECL_RESOLVE(clCreateCommandBufferKHR);
    FRAMECL_RESOLVE(clFinalizeCommandBufferKHR);
    FRAMECL_RESOLVE(clReleaseCommandBufferKHR);
    FRAMECL_RESOLVE(clEnqueueCommandBufferKHR);
    FRAMECL_RESOLVE(clCommandNDRangeKernelKHR);
    FRAMECL_RESOLVE(clUpdateMutableCommandsKHR);
    FRAMECL_RESOLVE(clEnqueueAcquireExternalMemObjectsKHR);
    FRAMECL_RESOLVE(clEnqueueReleaseExternalMemObjectsKHR);
    FRAMECL_RESOLVE(clCreateSemaphoreWithPropertiesKHR);
    FRAMECL_RESOLVE(clEnqueueSignalSemaphoresKHR);
    FRAMECL_RESOLVE(clGetSemaphoreHandleForTypeKHR);
    FRAMECL_RESOLVE(clReleaseSemaphoreKHR);
#undef FRAMECL_RESOLVE
    return table;
}

} // namespace framecl::gpu
