#pragma once
// Which clock framecl times GPU work with on a device. The device's profiling
// timestamps, where a check at start finds them sound: they time each dispatch alone.
// Where they are missing or absurd (rusticl 22.3 returns zeros), the host's
// CLOCK_MONOTONIC from before an enqueue to after the wait for it: what tuning,
// calibration, the kernel-time budget, the statistics and framecl-bench then measure,
// so that no zero is ever taken for a time (docs/architecture.md, "Timing").

#include <cstdint>
#include <optional>
#include <string>

#include <CL/opencl.hpp>

#include "config/config.hpp"

namespace framecl::gpu {

enum class Clock { Device, Host };

struct ClockChoice {
    Clock clock = Clock::Device;
    // Why: what the check saw of the device's timestamps, or that the configuration
    // asked for the host's clock.
    std::string reason;

    bool device() const { return clock == Clock::Device; }
};

// "device" or "host".
const char* clockName(Clock clock);

// Checks the profiling timestamps of a few buffer fills on `queue` (made with
// CL_QUEUE_PROFILING_ENABLE) against the host's clock around each: every timestamp
// present and non-zero, queued <= submitted <= started <= ended, a fill of megabytes
// lasting more than zero, and no command lasting longer than the host waited for it.
// Under `gpu.timestamps = "host"` it checks nothing and chooses the host.
ClockChoice chooseClock(const cl::Context& context, const cl::CommandQueue& queue,
                        config::TimestampSource configured);

// A command's four profiling timestamps, as clGetEventProfilingInfo gives them.
struct CommandTimestamps {
    cl_ulong queued = 0, submitted = 0, started = 0, ended = 0;
};

// What is wrong with the timestamps of a buffer fill that the host waited `host_ns`
// for, from before its enqueue to after its end; `largest`: the check's largest fill,
// which lasts long enough for any device clock to see. Empty when nothing is.
std::string timestampProblem(const CommandTimestamps& at, uint64_t host_ns, bool largest);

// The same on a context and profiling queue of its own on `device`, for a device not
// opened (framecld --list-devices).
ClockChoice chooseClock(cl_platform_id platform, cl_device_id device, config::TimestampSource configured);

// A command's profiled start and end on the device clock (GpuContext::profiledSpan).
struct ProfiledSpan {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t ns() const { return end_ns - start_ns; }
};
} // namespace framecl::gpu
