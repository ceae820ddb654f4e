#include "gpu/device_probe.hpp"

#include <thread>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"

namespace framecl::gpu {
namespace {

// Where the probe reads back to. Static: a read that timed out may still land, after
// the probe has returned.
cl_uint read_back = 0;

} // namespace

Result<void> probeDevice(const GpuContext& gpu, std::chrono::milliseconds timeout)
{
    // A queue of its own: the lanes may hold the failed frame's commands, and what a
    // runtime does with commands behind a failed one is its own choice.
    cl_int err = CL_SUCCESS;
    const cl::CommandQueue queue(
        gpu.vendor().clCreateCommandQueueWithProperties(gpu.context()(), gpu.device(), nullptr, &err));
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateCommandQueueWithProperties", err, "the device probe"));
    const cl::Buffer buffer(gpu.context(), CL_MEM_READ_WRITE, sizeof(cl_uint), nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateBuffer", err, "the device probe"));

    // A different value each time, so that an earlier probe's read cannot pass for this one's.
    static cl_uint pattern = 0x5a17f00d;
    ++pattern;
    err = clEnqueueFillBuffer(queue(), buffer(), &pattern, sizeof pattern, 0, sizeof pattern, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return fail(clFailure("clEnqueueFillBuffer", err, "the device probe"));
    cl_event read_event = nullptr;
    read_back = 0;
    err = clEnqueueReadBuffer(queue(), buffer(), CL_FALSE, 0, sizeof read_back, &read_back, 0, nullptr, &read_event);
    if (err != CL_SUCCESS)
        return fail(clFailure("clEnqueueReadBuffer", err, "the device probe"));
    const cl::Event read(read_event);
    if (err = clFlush(queue()); err != CL_SUCCESS)
        return fail(clFailure("clFlush", err, "the device probe"));

    // Polled, not waited for: a hung device could hold clWaitForEvents for ever.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        cl_int status = CL_QUEUED;
        if (err = clGetEventInfo(read(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
            err != CL_SUCCESS)
            return fail(clFailure("clGetEventInfo", err, "the device probe"));
        if (status < 0)
            return fail(fmt::format("the device probe's read ended with {}", clErrorName(status)));
        if (status == CL_COMPLETE)
            break;
        if (std::chrono::steady_clock::now() >= deadline)
            return fail(fmt::format("the device probe, a 4-byte fill and read, did not end within {} ms",
                                    timeout.count()));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (read_back != pattern)
        return fail(fmt::format("the device probe read back {:#x} where it had written {:#x}", read_back, pattern));
    return {};
}

} // namespace framecl::gpu
