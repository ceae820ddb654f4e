#include <doctest/doctest.h>

#include <CL/cl_ext.h>

#include "gpu/cl_error.hpp"

using namespace framecl::gpu;

TEST_CASE("a core OpenCL error code is named as in cl.h")
{
    CHECK(std::string(clErrorName(CL_INVALID_VALUE)) == "CL_INVALID_VALUE");
    CHECK(std::string(clErrorName(CL_BUILD_PROGRAM_FAILURE)) == "CL_BUILD_PROGRAM_FAILURE");
    CHECK(std::string(clErrorName(CL_MAX_SIZE_RESTRICTION_EXCEEDED)) == "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
}

TEST_CASE("a command-buffer error code is named as in cl_ext.h")
{
    CHECK(std::string(clErrorName(CL_INVALID_COMMAND_BUFFER_KHR)) == "CL_INVALID_COMMAND_BUFFER_KHR");
    CHECK(std::string(clErrorName(CL_INVALID_MUTABLE_COMMAND_KHR)) == "CL_INVALID_MUTABLE_COMMAND_KHR");
}

TEST_CASE("an unknown error code is named CL_UNKNOWN_ERROR")
{
    CHECK(std::string(clErrorName(-9999)) == "CL_UNKNOWN_ERROR");
}

TEST_CASE("a failure message names the call, the code and the object")
{
    CHECK(clFailure("clCreateContext", CL_INVALID_VALUE, "device 'X'") ==
          "clCreateContext failed: CL_INVALID_VALUE (-30) [device 'X']");
    CHECK(clFailure("clGetPlatformIDs", CL_PLATFORM_NOT_FOUND_KHR) ==
          "clGetPlatformIDs failed: CL_PLATFORM_NOT_FOUND_KHR (-1001)");
}
