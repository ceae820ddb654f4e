#pragma once
// Helpers for the GPU tests: the PoCL device opened as framecld would open it, and a
// temporary directory removed at the end of the test.

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include <unistd.h>

#include <doctest/doctest.h>

#include "gpu/context.hpp"

namespace framecl::gpu::test {

// The device `gpu.device = "auto"` picks: PoCL on the CPU in CI.
inline std::unique_ptr<GpuContext> openTestGpu()
{
    auto gpu = openGpu(config::GpuConfig{});
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

class TempDir {
public:
    TempDir()
    {
        static std::atomic<int> counter{0};
        path_ = std::filesystem::temp_directory_path() /
                ("framecl-gpu-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace framecl::gpu::test
