#include "pipeline/stage_plan.hpp"

#include <string>

#include <fmt/format.h>

namespace framecl::pipeline {
namespace {

tl::unexpected<Error> stageError(const PipelineDefinition& pipeline, size_t k, const std::string& what)
{
    return fail(fmt::format("stage {} ({}): {}", k + 1, pipeline.stages[k].label, what));
}

// Stage k's plan for `in`, its intermediates within limits.max_frame_pixels: asked
// again by askImageOutputs, and checked again.
Result<framecl_plan> planWithin(const PipelineDefinition& pipeline, size_t k, const ResolvedParams& params,
                                const FrameShape& in, uint32_t output_image_planes, uint64_t max_frame_pixels)
{
    auto plan = pipeline.stages[k].plugin->plan(in, params, output_image_planes);
    if (!plan)
        return stageError(pipeline, k, plan.error().message);
    for (uint32_t i = 0; i < plan->intermediate_count; ++i) {
        const framecl_format& own = plan->intermediates[i].format;
        if (max_frame_pixels && uint64_t(own.width) * own.height > max_frame_pixels)
            return stageError(pipeline, k,
                              fmt::format("its intermediate {} is over limits.max_frame_pixels = {}", describe(own),
                                          max_frame_pixels));
    }
    return plan;
}

} // namespace

Result<std::vector<StagePlan>> negotiateFormats(const PipelineDefinition& pipeline, const FrameShape& input,
                                                const std::vector<StageChoice>& choices, uint64_t max_frame_pixels)
{
    const auto& definitions = pipeline.stages;
    if (!choices.empty() && choices.size() != definitions.size())
        return fail(fmt::format("{} stage choices for {} stages", choices.size(), definitions.size()));
    std::vector<StagePlan> stages;
    FrameShape in = input;
    for (size_t k = 0; k < definitions.size(); ++k) {
        const StageDefinition& definition = definitions[k];
        StagePlan stage;
        stage.choice = choices.empty() ? StageChoice{} : choices[k];
        if (const std::string& variant = stage.choice.variant; !variant.empty()) {
            const auto index = variantParam(definition.plugin->params());
            if (!index)
                return stageError(pipeline, k,
                                  fmt::format("variant '{}' chosen, but the plugin has no variants", variant));
            stage.params = definition.params.with(*index, variant);
        } else {
            stage.params = definition.params.copy();
        }
        auto out = definition.plugin->negotiate(in, stage.params);
        if (!out)
            return stageError(pipeline, k, out.error().message);
        auto plan = planWithin(pipeline, k, stage.params, in, 0, max_frame_pixels);
        if (!plan)
            return tl::unexpected(plan.error());
        if (max_frame_pixels && uint64_t(out->width) * out->height > max_frame_pixels)
            return stageError(pipeline, k,
                              fmt::format("its output {} is over limits.max_frame_pixels = {}", describe(*out),
                                          max_frame_pixels));
        auto block = definition.plugin->paramBlock(in, stage.params);
        if (!block)
            return stageError(pipeline, k, block.error().message);
        stage.in = in;
        stage.out = *out;
        stage.plan = *plan;
        stage.param_block = std::move(*block);
        stage.run_first = stage.run_last = uint32_t(k);
        stages.push_back(std::move(stage));
        in = *out;
    }
    return stages;
}

Result<void> askImageOutputs(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages,
                             uint64_t max_frame_pixels)
{
    for (size_t k = stages.size(); k-- > 1;) {
        if (stages[k].fused() || stages[k - 1].fused())
            continue;
        const framecl_plan& reader = stages[k].plan;
        const uint32_t reads = boundIndices(reader, FRAMECL_ARG_INPUT_IMAGE);
        if (framecl_format_planes(stages[k].in.fourcc) != 1 || !(reads & 1u) ||
            (boundIndices(reader, FRAMECL_ARG_INPUT_PLANE) & 1u))
            continue;
        StagePlan& writer = stages[k - 1];
        auto plan = planWithin(pipeline, k - 1, writer.params, writer.in, 1u, max_frame_pixels);
        if (!plan)
            return tl::unexpected(plan.error());
        if (boundIndices(*plan, FRAMECL_ARG_OUTPUT_IMAGE) & 1u) {
            writer.plan = *plan;
            writer.out_image = true;
        }
    }
    return {};
}

const framecl_plan& StagePlan::runs() const
{
    static const framecl_plan nothing{};
    if (!fused())
        return plan;
    return fused_plan ? *fused_plan : nothing;
}

uint32_t boundIndices(const framecl_plan& plan, framecl_arg_kind kind)
{
    uint32_t bits = 0;
    for (uint32_t d = 0; d < plan.dispatch_count; ++d)
        for (uint32_t a = 0; a < plan.dispatches[d].arg_count; ++a)
            if (plan.dispatches[d].args[a].kind == kind)
                bits |= 1u << plan.dispatches[d].args[a].index;
    return bits;
}

} // namespace framecl::pipeline
