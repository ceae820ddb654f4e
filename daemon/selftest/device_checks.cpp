// The self-test's checks of the device itself: its clock, its hints and priority
// lanes, and image objects.
#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "gpu/hints.hpp"
#include "selftest/checks.hpp"

namespace framecl::selftest {
namespace {

constexpr const char* device_area = "device";

// A frame of R8 that no image row pitch rounds evenly.
constexpr pipeline::FrameShape image_shape{DRM_FORMAT_R8, 67, 45};

void checkTiming(const SelfTestDevice& device, std::vector<Check>& checks)
{
    const gpu::ClockChoice& clock = device.gpu.clock();
    checks.push_back({device_area, "profiling timestamps", clock.device() ? Outcome::Passed : Outcome::NotOffered,
                      clock.device() ? clock.reason
                                     : clock.reason + "; GPU work is timed by the host's clock around clFinish"});
}

void checkHints(const SelfTestDevice& device, std::vector<Check>& checks)
{
    const gpu::HintPlan& hints = device.gpu.hintPlan();
    const bool any = !hints.context_properties.empty() || hints.lane_level.has_value();
    checks.push_back({device_area, "context and queue hints", any ? Outcome::Passed : Outcome::NotOffered,
                      any ? "the context and its queues opened with " + hints.description : hints.description});
    const auto set_perf_hint = device.gpu.vendor().clSetPerfHintQCOM;
    if (!device.gpu.capabilities().qcom_perf_hint || !set_perf_hint) {
        checks.push_back({device_area, "perf hint switch", Outcome::NotOffered, "the device has no cl_qcom_perf_hint"});
        return;
    }
    // What the perf-hint switch does when frames stop and start again.
    for (const config::PerfHint level : {device.config.gpu.idle_perf_hint, device.config.gpu.perf_hint})
        if (const cl_int err = set_perf_hint(device.gpu.context()(), gpu::qcomPerfHint(level)); err != CL_SUCCESS) {
            checks.push_back({device_area, "perf hint switch", Outcome::Failed, gpu::clFailure("clSetPerfHintQCOM", err)});
            return;
        }
    checks.push_back({device_area, "perf hint switch", Outcome::Passed,
                      fmt::format("clSetPerfHintQCOM to {} and back to {}", gpu::levelName(device.config.gpu.idle_perf_hint),
                                  gpu::levelName(device.config.gpu.perf_hint))});
}

// A copy of a memfd frame through each lane at a priority of its own, as a client
// class with gpu_priority runs.
void checkPriorityLanes(const SelfTestDevice& device, std::vector<Check>& checks)
{
    bool any = false;
    for (const config::PriorityHint level :
         {config::PriorityHint::High, config::PriorityHint::Normal, config::PriorityHint::Low}) {
        const auto lane = device.gpu.priorityLane(level);
        if (!lane)
            continue;
        any = true;
        const std::string name = fmt::format("priority lane {}", gpu::levelName(level));
        auto problem = [&]() -> std::string {
            auto copy = findPipeline(device, "copy");
            if (!copy)
                return copy.error().message;
            pipeline::SessionOptions options = sessionOptions(device, gpu::RecordingMode::Off);
            options.priority_lane = *lane;
            auto session = pipeline::Session::open(device.gpu, *copy, image_shape, options);
            if (!session)
                return session.error().message;
            const PackedFrame content = randomFrame(image_shape, 7);
            auto ran = runShared(device, **session, content, memfdWith);
            return ran ? differences(ran->output, content) : ran.error().message;
        }();
        checks.push_back({device_area, name, problem.empty() ? Outcome::Passed : Outcome::Failed,
                          problem.empty() ? "a frame copied through it" : problem});
    }
    if (!any)
        checks.push_back({device_area, "priority lanes", Outcome::NotOffered,
                          "the device has one queue priority (no cl_khr_priority_hints)"});
}

// An image written from the host and read back; where the device makes images from
// buffers (cl_khr_image2d_from_buffer), one over a buffer read back too.
void checkImages(const SelfTestDevice& device, std::vector<Check>& checks)
{
    const gpu::Capabilities& caps = device.gpu.capabilities();
    if (!caps.images) {
        checks.push_back({device_area, "images", Outcome::NotOffered, "the device has no image support"});
        return;
    }
    const size_t width = image_shape.width, height = image_shape.height;
    const PackedFrame content = randomFrame(image_shape, 11);
    const cl::ImageFormat format(CL_R, CL_UNORM_INT8);
    const auto readBack = [&](const cl::Image2D& image) -> std::string {
        PackedFrame got(content.size());
        const cl_int err =
            device.gpu.queue().enqueueReadImage(image, CL_TRUE, {0, 0, 0}, {width, height, 1}, 0, 0, got.data());
        return err != CL_SUCCESS ? gpu::clFailure("clEnqueueReadImage", err) : differences(got, content);
    };
    cl_int err = CL_SUCCESS;
    cl::Image2D image(device.gpu.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, format, width, height, 0,
                      const_cast<uint8_t*>(content.data()), &err);
    const std::string problem = err != CL_SUCCESS ? gpu::clFailure("clCreateImage", err) : readBack(image);
    checks.push_back({device_area, "images", problem.empty() ? Outcome::Passed : Outcome::Failed,
                      problem.empty() ? fmt::format("an R8 image of {}x{} written and read back", width, height)
                                      : problem});
    if (caps.image_pitch_alignment == 0) {
        checks.push_back({device_area, "images from buffers", Outcome::NotOffered,
                          "the device makes no images from buffers (cl_khr_image2d_from_buffer)"});
        return;
    }
    const size_t pitch = (width + caps.image_pitch_alignment - 1) / caps.image_pitch_alignment *
                         caps.image_pitch_alignment;
    PackedFrame pitched(pitch * height);
    for (size_t y = 0; y < height; ++y)
        std::copy_n(content.begin() + long(y * width), width, pitched.begin() + long(y * pitch));
    cl::Buffer buffer(device.gpu.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, pitched.size(), pitched.data(),
                      &err);
    std::string from_buffer;
    if (err != CL_SUCCESS)
        from_buffer = gpu::clFailure("clCreateBuffer", err);
    else {
        cl::Image2D over(device.gpu.context(), format, buffer, width, height, pitch, &err);
        from_buffer = err != CL_SUCCESS ? gpu::clFailure("clCreateImage", err, "from a buffer") : readBack(over);
    }
    checks.push_back({device_area, "images from buffers", from_buffer.empty() ? Outcome::Passed : Outcome::Failed,
                      from_buffer.empty() ? fmt::format("an R8 image over a buffer of row pitch {} read back", pitch)
                                          : from_buffer});
}

} // namespace

void checkDevice(const SelfTestDevice& device, std::vector<Check>& checks)
{
    checkTiming(device, checks);
    checkHints(device, checks);
    checkPriorityLanes(device, checks);
    checkImages(device, checks);
}

} // namespace framecl::selftest
