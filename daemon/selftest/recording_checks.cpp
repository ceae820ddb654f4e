// The self-test's checks of the ways a session replays its dispatches each frame
// (docs/architecture.md, "Scheduling"): Qualcomm's recordable queues, Khronos' command
// buffers, and none; each with its dispatches cut into tiles and its intermediate
// between two stages, over frames of different content.
#include <fmt/format.h>

#include "gpu/replay.hpp"
#include "selftest/checks.hpp"

namespace framecl::selftest {
namespace {

constexpr const char* recording_area = "recording";
constexpr pipeline::FrameShape recording_shape{DRM_FORMAT_R8, 97, 64};
constexpr int frames = 3;
// A prediction this slow cuts each dispatch of the frame into a few tiles under any
// budget from 1 ms.
constexpr double assumed_ns_per_item = 1000.0;


std::string runMode(const SelfTestDevice& device, gpu::RecordingMode mode)
{
    auto pipeline = findPipeline(device, recording_pipeline);
    if (!pipeline)
        return pipeline.error().message;
    pipeline::SessionOptions options = sessionOptions(device, mode);
    if (options.kernel_budget_ns == 0)
        options.kernel_budget_ns = 1'000'000;
    options.assumed_ns_per_item = assumed_ns_per_item;
    std::vector<PackedFrame> inputs;
    for (int i = 0; i < frames; ++i)
        inputs.push_back(randomFrame(recording_shape, 20 + uint32_t(i)));
    auto output = runFrames(device, *pipeline, recording_shape, options, inputs);
    if (!output)
        return output.error().message;
    return differences(*output, recordingReference(inputs.back(), recording_shape));
}

} // namespace

void checkRecordings(const SelfTestDevice& device, std::vector<Check>& checks)
{
    const struct {
        gpu::RecordingMode mode;
        config::RecordingMode asked;
    } modes[] = {{gpu::RecordingMode::Qcom, config::RecordingMode::Qcom},
                 {gpu::RecordingMode::Khr, config::RecordingMode::Khr},
                 {gpu::RecordingMode::Off, config::RecordingMode::Off}};
    for (const auto& [mode, asked] : modes) {
        const char* name = gpu::recordingModeName(mode);
        std::string why;
        if (gpu::chooseRecordingMode(device.gpu.capabilities(), device.gpu.vendor(), asked, &why) != mode) {
            // "gpu.recording = qcom: <what the device lacks>; using khr": only what it lacks.
            const size_t from = why.find(": ") == std::string::npos ? 0 : why.find(": ") + 2;
            checks.push_back({recording_area, name, Outcome::NotOffered, why.substr(from, why.rfind("; using") - from)});
            continue;
        }
        const std::string problem = runMode(device, mode);
        checks.push_back({recording_area, name, problem.empty() ? Outcome::Passed : Outcome::Failed,
                          problem.empty() ? fmt::format("{} frames of {} through two box stages in tiles, each equal "
                                                        "to the CPU reference",
                                                        frames, pipeline::describe(recording_shape))
                                          : problem});
    }
}

} // namespace framecl::selftest
