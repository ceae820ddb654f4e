#pragma once
// Helpers for tests that run OpenCL: the device opened as framecld would open it.

#include <filesystem>
#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "gpu/context.hpp"

namespace framecl::test {

// The device `gpu.device = "auto"` picks: PoCL on the CPU in CI.
inline std::unique_ptr<gpu::GpuContext> openTestGpu()
{
    auto gpu = gpu::openGpu(config::GpuConfig{});
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

} // namespace framecl::test
