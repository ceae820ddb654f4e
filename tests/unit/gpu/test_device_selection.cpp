#include <doctest/doctest.h>

#include "gpu/device_selection.hpp"

using namespace framecl::gpu;

namespace {

DeviceCandidate candidate(std::string name, std::string platform, DeviceType type)
{
    return DeviceCandidate{nullptr, nullptr, std::move(name), std::move(platform), type};
}

const std::vector<DeviceCandidate> kCpuThenGpu = {
    candidate("pthread-skylake-avx512", "Portable Computing Language", DeviceType::Cpu),
    candidate("QUALCOMM Adreno(TM) 740", "QUALCOMM Snapdragon(TM)", DeviceType::Gpu),
};

} // namespace

TEST_CASE("auto prefers a GPU over a CPU listed before it")
{
    auto chosen = chooseDevice(kCpuThenGpu, "auto");
    REQUIRE(chosen.has_value());
    CHECK(*chosen == 1);
}

TEST_CASE("auto prefers an accelerator over a CPU when there is no GPU")
{
    auto chosen = chooseDevice({candidate("cpu", "p", DeviceType::Cpu), candidate("dsp", "p", DeviceType::Accelerator)},
                               "auto");
    REQUIRE(chosen.has_value());
    CHECK(*chosen == 1);
}

TEST_CASE("auto falls back to the CPU when there is neither GPU nor accelerator")
{
    auto chosen = chooseDevice({candidate("custom", "p", DeviceType::Other), candidate("pocl", "p", DeviceType::Cpu)},
                               "auto");
    REQUIRE(chosen.has_value());
    CHECK(*chosen == 1);
}

TEST_CASE("a device string picks the device whose name contains it, ignoring case")
{
    auto chosen = chooseDevice(kCpuThenGpu, "adreno");
    REQUIRE(chosen.has_value());
    CHECK(*chosen == 1);
    chosen = chooseDevice(kCpuThenGpu, "SKYLAKE");
    REQUIRE(chosen.has_value());
    CHECK(*chosen == 0);
}

TEST_CASE("a device string also matches the platform name")
{
    auto chosen = chooseDevice(kCpuThenGpu, "portable computing");
    REQUIRE(chosen.has_value());
    CHECK(*chosen == 0);
}

TEST_CASE("an unknown device name is an error that lists the devices")
{
    auto chosen = chooseDevice(kCpuThenGpu, "mali");
    REQUIRE_FALSE(chosen.has_value());
    const std::string& message = chosen.error().message;
    CHECK(message.find("'mali'") != std::string::npos);
    CHECK(message.find("'pthread-skylake-avx512'") != std::string::npos);
    CHECK(message.find("'QUALCOMM Adreno(TM) 740'") != std::string::npos);
}

TEST_CASE("no device at all is an error, even for auto")
{
    CHECK_FALSE(chooseDevice({}, "auto").has_value());
}
