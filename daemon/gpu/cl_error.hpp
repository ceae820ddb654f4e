#pragma once
// OpenCL error reporting (docs/architecture.md, "Errors, logs and ownership"): an error names the call, the
// cl_int by name and the object it concerned.

#include <string>
#include <string_view>

#include <CL/cl.h>

namespace framecl::gpu {

// "CL_INVALID_VALUE" for -30; covers the core codes and the extension codes declared
// in the Khronos headers. Unknown codes give "CL_UNKNOWN_ERROR".
const char* clErrorName(cl_int code);

// "clCreateContext failed: CL_INVALID_VALUE (-30) [device 'X']". `object` is what the
// call concerned ("device 'X'", "program 'sobel.cl'"); empty leaves the brackets out.
std::string clFailure(std::string_view call, cl_int code, std::string_view object = {});

} // namespace framecl::gpu
