#include "gpu/timestamps.hpp"

#include <array>

#include <fmt/format.h>

#include "base/monotonic_clock.hpp"
#include "gpu/cl_error.hpp"

namespace framecl::gpu {
namespace {

// Fills of these sizes: large enough that any device takes microseconds over the
// largest, which its clock must see; small enough that the check takes milliseconds on
// a CPU device.
constexpr std::array<size_t, 3> fill_bytes = {1u << 16, 1u << 20, 8u << 20};

// The profiling timestamps of `event`, or why they cannot be read.
std::string readTimestamps(const cl::Event& event, CommandTimestamps& at)
{
    const std::pair<cl_profiling_info, cl_ulong*> names[] = {{CL_PROFILING_COMMAND_QUEUED, &at.queued},
                                                             {CL_PROFILING_COMMAND_SUBMIT, &at.submitted},
                                                             {CL_PROFILING_COMMAND_START, &at.started},
                                                             {CL_PROFILING_COMMAND_END, &at.ended}};
    for (const auto& [name, value] : names)
        if (const cl_int err = clGetEventProfilingInfo(event(), name, sizeof *value, value, nullptr); err != CL_SUCCESS)
            return fmt::format("clGetEventProfilingInfo fails: {}", clErrorName(err));
    return {};
}

} // namespace

std::string timestampProblem(const CommandTimestamps& at, uint64_t host_ns, bool largest)
{
    if (at.queued == 0 || at.submitted == 0 || at.started == 0 || at.ended == 0)
        return "a buffer fill's are zero";
    if (!(at.queued <= at.submitted && at.submitted <= at.started && at.started <= at.ended))
        return fmt::format("a buffer fill's are out of order (queued {}, submitted {}, started {}, ended {})",
                           at.queued, at.submitted, at.started, at.ended);
    if (largest && at.ended == at.started)
        return fmt::format("a fill of {} bytes took no time by them", fill_bytes.back());
    // A millisecond of slack: the two clocks are read at different moments.
    if (at.ended - at.queued > host_ns + 1'000'000)
        return fmt::format("a buffer fill took {} ns by them but {} ns by the host's clock",
                           at.ended - at.queued, host_ns);
    return {};
}

const char* clockName(Clock clock)
{
    return clock == Clock::Device ? "device" : "host";
}

ClockChoice chooseClock(const cl::Context& context, const cl::CommandQueue& queue,
                        config::TimestampSource configured)
{
    if (configured == config::TimestampSource::Host)
        return {Clock::Host, "gpu.timestamps = \"host\""};
    const auto host = [](std::string why) {
        return ClockChoice{Clock::Host, "the device's profiling timestamps are unusable: " + why};
    };
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer(context, CL_MEM_READ_WRITE, fill_bytes.back(), nullptr, &err);
    if (err != CL_SUCCESS)
        return host(clFailure("clCreateBuffer", err, "the timestamp check's buffer"));
    for (const size_t bytes : fill_bytes) {
        const uint8_t pattern = 0x5a;
        cl::Event event;
        const uint64_t before = monotonicNs();
        if ((err = queue.enqueueFillBuffer(buffer, pattern, 0, bytes, nullptr, &event)) != CL_SUCCESS)
            return host(clFailure("clEnqueueFillBuffer", err, "the timestamp check"));
        if ((err = event.wait()) != CL_SUCCESS)
            return host(clFailure("clWaitForEvents", err, "the timestamp check"));
        const uint64_t host_ns = monotonicNs() - before;
        CommandTimestamps at;
        if (auto unread = readTimestamps(event, at); !unread.empty())
            return host(std::move(unread));
        if (auto wrong = timestampProblem(at, host_ns, bytes == fill_bytes.back()); !wrong.empty())
            return host(std::move(wrong));
    }
    return {Clock::Device, "the device's profiling timestamps agree with the host's clock"};
}

ClockChoice chooseClock(cl_platform_id platform, cl_device_id device, config::TimestampSource configured)
{
    const auto host = [](std::string why) {
        return ClockChoice{Clock::Host, "the device's profiling timestamps are unusable: " + why};
    };
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, cl_context_properties(platform), 0};
    cl_int err = CL_SUCCESS;
    cl::Context context(clCreateContext(properties, 1, &device, nullptr, nullptr, &err));
    if (err != CL_SUCCESS)
        return host(clFailure("clCreateContext", err, "the timestamp check"));
    const cl_queue_properties queue_properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl::CommandQueue queue(clCreateCommandQueueWithProperties(context(), device, queue_properties, &err));
    if (err != CL_SUCCESS)
        return host(clFailure("clCreateCommandQueueWithProperties", err, "the timestamp check"));
    return chooseClock(context, queue, configured);
}

} // namespace framecl::gpu
