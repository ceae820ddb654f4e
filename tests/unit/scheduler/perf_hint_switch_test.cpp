// PerfHintSwitch on the emulated Adreno of tests/support/qcom_emulation.hpp, whose log
// holds every clSetPerfHintQCOM value, and on plain PoCL, which lacks the extension.
// Time is given as explicit time points; nothing sleeps.
#include <chrono>
#include <optional>
#include <vector>

#include <doctest/doctest.h>

#include "base/log.hpp"
#include "gpu/capabilities.hpp"
#include "gpu/device_selection.hpp"
#include "gpu/vendor_extensions.hpp"
#include "gpu_test_support.hpp"
#include "qcom_emulation.hpp"
#include "scheduler/perf_hint_switch.hpp"

using namespace framecl;
using namespace std::chrono_literals;
using framecl::scheduler::PerfHintSwitch;

namespace {

using Clock = std::chrono::steady_clock;
using Hints = std::vector<cl_uint>;

constexpr uint64_t kOnchipBytes = 256 * 1024;
const Clock::time_point t0 = Clock::time_point{} + 1h;

// The switches are logged at debug level; show them in the test log.
const bool debug_logs = [] {
    log::setup(log::Sink::Stderr, spdlog::level::debug);
    return true;
}();

config::GpuConfig gpuConfig(uint32_t idle_after_ms = 2000)
{
    config::GpuConfig config;
    config.idle_after_ms = idle_after_ms;
    return config;
}

// A frame of `length` starting at `start`.
void frame(PerfHintSwitch& hints, Clock::time_point start, Clock::duration length)
{
    hints.workStarted(start);
    hints.workEnded(start + length);
}

// The device `auto` picks, opened with the emulated entry points: with the emulated
// Adreno's capabilities when `offers_perf_hint`, else with its own (which lack the
// extension); `set_perf_hint` replaces the emulated clSetPerfHintQCOM.
std::unique_ptr<gpu::GpuContext> openDevice(test::QcomEmulation& emulation, bool offers_perf_hint,
                                            std::optional<clSetPerfHintQCOM_fn> set_perf_hint = std::nullopt)
{
    const config::GpuConfig config = gpuConfig();
    const std::vector<gpu::DeviceCandidate> candidates = gpu::enumerateDevices();
    const auto chosen = gpu::chooseDevice(candidates, config.device);
    REQUIRE(chosen.has_value());
    const gpu::DeviceCandidate& candidate = candidates[*chosen];
    gpu::Capabilities caps = gpu::readCapabilities(candidate.device);
    REQUIRE_FALSE(caps.qcom_perf_hint);
    if (offers_perf_hint)
        caps = emulation.emulatedCapabilities(caps, kOnchipBytes);
    gpu::VendorEntryPoints table = emulation.entryPoints(gpu::resolveVendorEntryPoints(candidate.platform));
    if (set_perf_hint)
        table.clSetPerfHintQCOM = *set_perf_hint;
    auto gpu = gpu::openGpu(candidate, caps, table, config);
    REQUIRE(gpu.has_value());
    return std::move(*gpu);
}

int g_failed_calls = 0;

cl_int CL_API_CALL failingSetPerfHint(cl_context, cl_uint)
{
    ++g_failed_calls;
    return CL_INVALID_CONTEXT;
}

} // namespace

TEST_CASE("no perf hint is set while frames keep coming")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes, gpuConfig());
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    CHECK(std::string(hints.current()) == "high");
    // 30 fps for a minute, with ticks in between: the gaps stay far below 2000 ms.
    for (int i = 0; i < 1800; ++i) {
        const Clock::time_point start = t0 + i * 33ms;
        frame(hints, start, 10ms);
        hints.tick(start + 20ms);
    }
    CHECK(emulation.log().perf_hints.empty());
    CHECK(std::string(hints.current()) == "high");
    CHECK(emulation.log().argument_errors.empty());
}

TEST_CASE("a frame in flight keeps the busy hint however long it runs")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes, gpuConfig());
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    hints.workStarted(t0);
    CHECK_FALSE(hints.idleDeadline().has_value());
    hints.tick(t0 + 10s);
    CHECK(emulation.log().perf_hints.empty());
    // Two frames in flight: the idle timer runs only once both ended.
    hints.workStarted(t0 + 10s);
    hints.workEnded(t0 + 11s);
    hints.tick(t0 + 20s);
    CHECK(emulation.log().perf_hints.empty());
    hints.workEnded(t0 + 21s);
    CHECK(hints.idleDeadline() == t0 + 23s);
}

TEST_CASE("after idle_after_ms without work the idle hint is set once")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes, gpuConfig());
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    frame(hints, t0, 10ms);
    REQUIRE(hints.idleDeadline() == t0 + 10ms + 2000ms);

    hints.tick(t0 + 10ms + 1999ms);
    CHECK(emulation.log().perf_hints.empty());
    CHECK(std::string(hints.current()) == "high");

    hints.tick(t0 + 10ms + 2000ms);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM});
    CHECK(std::string(hints.current()) == "low");
    CHECK_FALSE(hints.idleDeadline().has_value());

    hints.tick(t0 + 10s);
    hints.tick(t0 + 1h);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM});
}

TEST_CASE("without any work the idle hint comes idle_after_ms after the device was opened")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes, gpuConfig());
    PerfHintSwitch hints(*gpu, gpuConfig(500), t0);
    REQUIRE(hints.idleDeadline() == t0 + 500ms);
    hints.tick(t0 + 500ms);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM});
}

TEST_CASE("the next work after idle sets the busy hint once")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes, gpuConfig());
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    hints.tick(t0 + 2s);
    REQUIRE(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM});

    for (int i = 0; i < 10; ++i)
        frame(hints, t0 + 5s + i * 33ms, 10ms);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM, CL_PERF_HINT_HIGH_QCOM});
    CHECK(std::string(hints.current()) == "high");

    // Idle again after the last of them, and busy again with the next.
    const Clock::time_point last_end = t0 + 5s + 9 * 33ms + 10ms;
    CHECK(hints.idleDeadline() == last_end + 2s);
    hints.tick(last_end + 2s);
    frame(hints, last_end + 3s, 10ms);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM, CL_PERF_HINT_HIGH_QCOM, CL_PERF_HINT_LOW_QCOM,
                                              CL_PERF_HINT_HIGH_QCOM});
}

TEST_CASE("the configured busy and idle hints are the ones set")
{
    test::QcomEmulation emulation;
    config::GpuConfig config = gpuConfig(100);
    config.perf_hint = config::PerfHint::Normal;
    config.idle_perf_hint = config::PerfHint::Low;
    auto gpu = emulation.openGpu(kOnchipBytes, config);
    PerfHintSwitch hints(*gpu, config, t0);
    CHECK(std::string(hints.current()) == "normal");
    hints.tick(t0 + 100ms);
    frame(hints, t0 + 1s, 10ms);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM, CL_PERF_HINT_NORMAL_QCOM});
}

TEST_CASE("an idle hint equal to the busy hint is never set")
{
    test::QcomEmulation emulation;
    config::GpuConfig config = gpuConfig(100);
    config.idle_perf_hint = config::PerfHint::High;
    auto gpu = emulation.openGpu(kOnchipBytes, config);
    PerfHintSwitch hints(*gpu, config, t0);
    CHECK_FALSE(hints.idleDeadline().has_value());
    hints.tick(t0 + 1s);
    frame(hints, t0 + 2s, 10ms);
    CHECK(emulation.log().perf_hints.empty());
}

TEST_CASE("a reload sets the new hint for the present state at once")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes, gpuConfig());
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    hints.tick(t0 + 2s);
    REQUIRE(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM});

    config::GpuConfig reloaded = gpuConfig(300);
    reloaded.perf_hint = config::PerfHint::Normal;
    reloaded.idle_perf_hint = config::PerfHint::Normal;
    hints.reconfigure(reloaded);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM, CL_PERF_HINT_NORMAL_QCOM});
    CHECK(std::string(hints.current()) == "normal");

    // Busy at normal too: nothing to switch. Then a reload back to low when idle, with
    // the new idle_after_ms.
    frame(hints, t0 + 3s, 10ms);
    reloaded.idle_perf_hint = config::PerfHint::Low;
    hints.reconfigure(reloaded);
    CHECK(emulation.log().perf_hints.size() == 2);
    CHECK(hints.idleDeadline() == t0 + 3s + 10ms + 300ms);
    hints.tick(t0 + 3s + 10ms + 300ms);
    CHECK(emulation.log().perf_hints == Hints{CL_PERF_HINT_LOW_QCOM, CL_PERF_HINT_NORMAL_QCOM, CL_PERF_HINT_LOW_QCOM});
}

TEST_CASE("a failed clSetPerfHintQCOM keeps the hint in effect and is not retried per frame")
{
    test::QcomEmulation emulation;
    auto gpu = openDevice(emulation, true, failingSetPerfHint);
    g_failed_calls = 0;
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    hints.tick(t0 + 2s);
    CHECK(g_failed_calls == 1);
    CHECK(std::string(hints.current()) == "high");
    CHECK_FALSE(hints.idleDeadline().has_value());
    hints.tick(t0 + 10s);
    // Still at the busy hint, so work needs no call.
    for (int i = 0; i < 5; ++i)
        frame(hints, t0 + 11s + i * 33ms, 10ms);
    CHECK(g_failed_calls == 1);
}

TEST_CASE("an entry point on a device without cl_qcom_perf_hint is never called")
{
    test::QcomEmulation emulation;
    auto gpu = openDevice(emulation, false);
    REQUIRE((gpu->vendor().clSetPerfHintQCOM != nullptr));
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    CHECK_FALSE(hints.active());
    CHECK(hints.current() == nullptr);
    CHECK_FALSE(hints.idleDeadline().has_value());
    hints.tick(t0 + 1h);
    frame(hints, t0 + 2h, 10ms);
    hints.tick(t0 + 3h);
    hints.reconfigure(gpuConfig(1));
    CHECK(emulation.log().perf_hints.empty());
    CHECK(hints.current() == nullptr);
}

TEST_CASE("a device offering the extension without an entry point is left alone")
{
    test::QcomEmulation emulation;
    auto gpu = openDevice(emulation, true, nullptr);
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    CHECK_FALSE(hints.active());
    CHECK(hints.current() == nullptr);
    hints.tick(t0 + 1h);
    CHECK(emulation.log().perf_hints.empty());
}

TEST_CASE("on plain PoCL the switch is inactive")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    REQUIRE_FALSE(gpu->capabilities().qcom_perf_hint);
    PerfHintSwitch hints(*gpu, gpuConfig(), t0);
    CHECK_FALSE(hints.active());
    CHECK(hints.current() == nullptr);
    CHECK_FALSE(hints.idleDeadline().has_value());
    hints.workStarted(t0);
    hints.workEnded(t0 + 10ms);
    hints.tick(t0 + 1h);
    CHECK(hints.current() == nullptr);
}
