#pragma once
// String queries on OpenCL objects, shared by device enumeration and capabilities.

#include <string>

#include <CL/cl.h>

namespace framecl::gpu {

// The value without its terminating NUL and trailing blanks; empty when the query fails.
std::string deviceInfoString(cl_device_id device, cl_device_info param);
std::string platformInfoString(cl_platform_id platform, cl_platform_info param);

} // namespace framecl::gpu
