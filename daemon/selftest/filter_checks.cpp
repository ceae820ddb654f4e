// The self-test's filter checks: every case of filter_cases.hpp through every variant
// its plugin offers, on the device as framecld would run a client's session, against
// the CPU reference.
#include <fmt/format.h>

#include "gpu/replay.hpp"
#include "pipeline/plugin_params.hpp"
#include "selftest/checks.hpp"

namespace framecl::selftest {
namespace {

constexpr const char* filter_area = "filters";

// The variants of the stage that its plugin plans for `input` with the stage's
// parameters (convolve's separable ones refuse a 2D kernel), "auto" left out (the
// plugin's choice is one of them); one empty name for a plugin without variants.
std::vector<std::string> variantsOf(const pipeline::StageDefinition& stage, const pipeline::FrameShape& input)
{
    const auto index = pipeline::variantParam(stage.plugin->params());
    if (!index)
        return {""};
    std::vector<std::string> variants;
    for (const std::string& variant : stage.plugin->params()[*index].allowed)
        if (variant != "auto" && stage.plugin->plan(input, stage.params.with(*index, variant)))
            variants.push_back(variant);
    return variants;
}

} // namespace

void checkFilters(const SelfTestDevice& device, std::vector<Check>& checks)
{
    const auto cases = filterCases();
    const gpu::RecordingMode recording =
        gpu::chooseRecordingMode(device.gpu.capabilities(), device.gpu.vendor(), device.config.gpu.recording);
    for (size_t c = 0; c < cases.size(); ++c) {
        const FilterCase& filter = cases[c];
        auto pipeline = findPipeline(device, filterPipelineName(c));
        if (!pipeline) {
            checks.push_back({filter_area, filter.plugin, Outcome::Failed, pipeline.error().message});
            continue;
        }
        const pipeline::FrameShape input{filter.fourcc, filter.width, filter.height};
        const std::vector<PackedFrame> frames = filter.frames();
        const PackedFrame expected = filter.reference(frames);
        for (const std::string& variant : variantsOf((*pipeline)->stages.at(filter.varied_stage), input)) {
            const std::string name = variant.empty() ? filter.plugin : filter.plugin + " " + variant;
            pipeline::SessionOptions options = sessionOptions(device, recording);
            options.stage_choices.resize((*pipeline)->stages.size());
            options.stage_choices[filter.varied_stage].variant = variant;
            auto output = runFrames(device, *pipeline, input, options, frames);
            if (!output && variant == "image" && !device.gpu.capabilities().images) {
                checks.push_back({filter_area, name, Outcome::NotOffered, "the device has no image support"});
                continue;
            }
            const std::string wrong = output ? differences(*output, expected, filter.tolerance) : output.error().message;
            checks.push_back({filter_area, name, wrong.empty() ? Outcome::Passed : Outcome::Failed,
                              wrong.empty() ? fmt::format("{}, {}: {} the CPU reference", filter.what,
                                                          pipeline::describe(input),
                                                          filter.tolerance ? fmt::format("within {} of", filter.tolerance)
                                                                           : std::string("equal to"))
                                            : fmt::format("{}, {}: {}", filter.what, pipeline::describe(input), wrong)});
        }
    }
}

} // namespace framecl::selftest
