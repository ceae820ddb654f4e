#pragma once
// Helpers for tests that run OpenCL: the device opened as framecld would open it.

#include <filesystem>
#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "gpu/context.hpp"

namespace framecl::test {

// Picks PoCL by its platform name, for tests that check what PoCL reports, so they
// hold on a machine that also has a GPU.
inline constexpr const char* pocl_device = "Portable Computing Language";

// The device `gpu.device = device` picks; by default what framecld would use (PoCL on
// the CPU in CI, the GPU where there is one).
// `timestamps`: gpu.timestamps; "host" times GPU work by the host's clock on any device,
// as framecld does where a device's profiling timestamps are unusable.
inline std::unique_ptr<gpu::GpuContext> openTestGpu(const std::string& device = "auto",
                                                    config::TimestampSource timestamps = config::TimestampSource::Auto)
{
    config::GpuConfig config;
    config.device = device;
    config.timestamps = timestamps;
    auto gpu = gpu::openGpu(config);
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

} // namespace framecl::test
