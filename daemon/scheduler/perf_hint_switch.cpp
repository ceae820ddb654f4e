#include "scheduler/perf_hint_switch.hpp"

#include <fmt/format.h>

#include "base/log.hpp"
#include "gpu/cl_error.hpp"
#include "gpu/context.hpp"
#include "gpu/hints.hpp"

namespace framecl::scheduler {

PerfHintSwitch::PerfHintSwitch(const gpu::GpuContext& gpu, const config::GpuConfig& config, Clock::time_point since)
    : context_(gpu.context()()),
      busy_hint_(config.perf_hint),
      idle_hint_(config.idle_perf_hint),
      idle_after_(config.idle_after_ms),
      // gpu/hints.cpp created the context with the configured perf hint.
      current_(config.perf_hint),
      last_work_(since)
{
    // The capability says the device offers the extension, the entry says the platform
    // exports it (gpu/vendor_entry_points.hpp); both are needed to call it.
    if (gpu.capabilities().qcom_perf_hint)
        set_perf_hint_ = gpu.vendor().clSetPerfHintQCOM;
}

void PerfHintSwitch::workStarted(Clock::time_point now)
{
    if (!active())
        return;
    ++in_flight_;
    last_work_ = now;
    if (idle_) {
        // Only on the way out of idle, not per frame: a failing call warns once per idle
        // period rather than once per frame.
        idle_ = false;
        if (current_ != busy_hint_)
            apply(busy_hint_, "work started");
    }
}

void PerfHintSwitch::workEnded(Clock::time_point now)
{
    if (!active())
        return;
    if (in_flight_ > 0)
        --in_flight_;
    last_work_ = now;
}

std::optional<PerfHintSwitch::Clock::time_point> PerfHintSwitch::idleDeadline() const
{
    if (!active() || idle_ || in_flight_ > 0 || idle_hint_ == busy_hint_)
        return std::nullopt;
    return last_work_ + idle_after_;
}

void PerfHintSwitch::tick(Clock::time_point now)
{
    if (!active() || idle_ || in_flight_ > 0 || now - last_work_ < idle_after_)
        return;
    idle_ = true;
    if (current_ != idle_hint_)
        apply(idle_hint_, fmt::format("no work for {} ms", idle_after_.count()));
}

const char* PerfHintSwitch::current() const
{
    return active() ? gpu::levelName(current_) : nullptr;
}

void PerfHintSwitch::reconfigure(const config::GpuConfig& config)
{
    busy_hint_ = config.perf_hint;
    idle_hint_ = config.idle_perf_hint;
    idle_after_ = std::chrono::milliseconds(config.idle_after_ms);
    if (!active())
        return;
    const config::PerfHint wanted = idle_ ? idle_hint_ : busy_hint_;
    if (wanted != current_)
        apply(wanted, "configuration reloaded");
}

void PerfHintSwitch::apply(config::PerfHint hint, std::string_view why)
{
    const cl_int err = set_perf_hint_(context_, gpu::qcomPerfHint(hint));
    if (err != CL_SUCCESS) {
        log::get("gpu")->warn("{}; keeping perf hint {} (wanted {}: {})",
                              gpu::clFailure("clSetPerfHintQCOM", err, "context"), gpu::levelName(current_),
                              gpu::levelName(hint), why);
        return;
    }
    log::get("gpu")->debug("perf hint {} -> {} ({})", gpu::levelName(current_), gpu::levelName(hint), why);
    current_ = hint;
}

} // namespace framecl::scheduler
