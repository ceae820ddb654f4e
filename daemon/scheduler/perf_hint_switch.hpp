#pragma once
// The Qualcomm perf hint (guide §9.1.1, cl_qcom_perf_hint) following the load: the
// configured `gpu.perf_hint` (default high) while frames flow, `gpu.idle_perf_hint`
// (default low) once `gpu.idle_after_ms` passed with no frame in flight, switched on the
// live context with clSetPerfHintQCOM (issue 6, "Power and priority").
//
// The context is created with `gpu.perf_hint` as a property (gpu/hints.cpp), so nothing
// is called until the first switch to the idle hint. On a device without the extension,
// or a platform that does not export the entry point, every method does nothing.
//
// Not thread-safe: the scheduler's thread owns it. It borrows the context: the
// GpuContext it was made from must outlive it.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "config/config.hpp"
#include "gpu/vendor_extensions.hpp"

namespace framecl::gpu {
class GpuContext;
}

namespace framecl::scheduler {

class PerfHintSwitch {
public:
    using Clock = std::chrono::steady_clock;

    // Active only when the device offers cl_qcom_perf_hint and the vendor table has
    // clSetPerfHintQCOM. The idle timer starts at `since`: a daemon that never gets a
    // frame still drops to the idle hint `idle_after_ms` after it opened the device.
    PerfHintSwitch(const gpu::GpuContext& gpu, const config::GpuConfig& config, Clock::time_point since = Clock::now());

    // A frame (or dispatch) went to the GPU: the busy hint is set if the idle one is in
    // effect, and the idle timer stops until the work ends.
    void workStarted(Clock::time_point now);

    // A frame finished (done, failed or dropped): once none is in flight, the idle timer
    // runs from `now`. Calls beyond the matching workStarted are ignored.
    void workEnded(Clock::time_point now);

    // When tick() should run next: the last work plus `idle_after_ms`. nullopt when
    // inactive, already idle, while a frame is in flight, or when the idle and busy hints
    // are the same. Read it again after each of the calls above.
    std::optional<Clock::time_point> idleDeadline() const;

    // Switches to the idle hint if `idle_after_ms` passed since the last work with no
    // frame in flight; otherwise does nothing, so it may be called at any time.
    void tick(Clock::time_point now);

    // The hint in effect: "high", "normal" or "low"; nullptr when inactive. After a
    // failed clSetPerfHintQCOM it is still the hint that was in effect before.
    const char* current() const;

    // SIGHUP: takes the new hints and `idle_after_ms`. The hint for the present state
    // (busy or idle) is applied at once if it differs from the one in effect.
    void reconfigure(const config::GpuConfig& config);

    bool active() const { return set_perf_hint_ != nullptr; }

private:
    // Calls clSetPerfHintQCOM; on success `current_` becomes `hint`. A failure is logged
    // as a warning and changes nothing: the GPU keeps running at the old level.
    void apply(config::PerfHint hint, std::string_view why);

    cl_context context_ = nullptr;
    clSetPerfHintQCOM_fn set_perf_hint_ = nullptr; // nullptr: inactive
    config::PerfHint busy_hint_;
    config::PerfHint idle_hint_;
    std::chrono::milliseconds idle_after_;
    config::PerfHint current_;  // what the context runs at
    bool idle_ = false;         // the idle switch was made (or attempted) since the last work
    uint32_t in_flight_ = 0;
    Clock::time_point last_work_;
};

} // namespace framecl::scheduler
