#include "pipeline/frame_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "pipeline/plugin_registry.hpp"

namespace framecl::pipeline {
namespace {

// The value `values` gives a parameter of `schema` in the type resolveParams takes, or
// what is wrong with it. The range is resolveParams' to check.
Result<config::ParameterValue> numericValue(const ParamSchema& schema, const std::vector<double>& values)
{
    switch (schema.type) {
    case FRAMECL_PARAM_TYPE_INT:
        if (values.size() != 1)
            return fail(fmt::format("{} takes one integer, got {} numbers", schema.name, values.size()));
        if (values[0] != std::trunc(values[0]) || !(std::fabs(values[0]) < 0x1p53))
            return fail(fmt::format("{} must be an integer, got {}", schema.name, values[0]));
        return config::ParameterValue(int64_t(values[0]));
    case FRAMECL_PARAM_TYPE_FLOAT:
        if (values.size() != 1)
            return fail(fmt::format("{} takes one number, got {}", schema.name, values.size()));
        return config::ParameterValue(values[0]);
    case FRAMECL_PARAM_TYPE_FLOAT_LIST:
        return config::ParameterValue(values);
    case FRAMECL_PARAM_TYPE_BOOL:
    case FRAMECL_PARAM_TYPE_ENUM:
        break;
    }
    return fail(fmt::format("{} is not a number: only numeric parameters change per frame; open a new session "
                            "for another value",
                            schema.name));
}

// The stage's parameters as resolveParams takes them: every value it holds, by name,
// then `changes` (the later value of a key wins).
std::vector<config::StageParameter> written(const Plugin& plugin, const ResolvedParams& params,
                                            const std::vector<config::StageParameter>& changes)
{
    std::vector<config::StageParameter> all;
    for (size_t i = 0; i < plugin.params().size(); ++i)
        if (const auto* list = std::get_if<std::vector<double>>(&params.source(i)); !list || !list->empty())
            all.push_back({plugin.params()[i].name, params.source(i), {}});
    all.insert(all.end(), changes.begin(), changes.end());
    return all;
}

bool sameArg(const framecl_arg& a, const framecl_arg& b)
{
    return a.kind == b.kind && a.index == b.index && a.uint_value == b.uint_value && a.int_value == b.int_value &&
           std::memcmp(&a.float_value, &b.float_value, sizeof a.float_value) == 0 && a.local_bytes == b.local_bytes;
}

bool sameFormat(const framecl_format& a, const framecl_format& b)
{
    return a.fourcc == b.fourcc && a.width == b.width && a.height == b.height;
}

bool sameDispatch(const framecl_dispatch& a, const framecl_dispatch& b)
{
    return std::strcmp(a.kernel, b.kernel) == 0 && a.kernel_file == b.kernel_file && a.dims == b.dims &&
           a.global[0] == b.global[0] && a.global[1] == b.global[1] && a.local_hint[0] == b.local_hint[0] &&
           a.local_hint[1] == b.local_hint[1] && a.tileable_axes == b.tileable_axes && a.arg_count == b.arg_count &&
           std::equal(a.args, a.args + a.arg_count, b.args, sameArg);
}

} // namespace

bool samePlan(const framecl_plan& a, const framecl_plan& b)
{
    if (a.intermediate_count != b.intermediate_count || a.dispatch_count != b.dispatch_count ||
        a.constant_count != b.constant_count || a.state_count != b.state_count)
        return false;
    for (uint32_t i = 0; i < a.intermediate_count; ++i)
        if (!sameFormat(a.intermediates[i].format, b.intermediates[i].format))
            return false;
    for (uint32_t d = 0; d < a.dispatch_count; ++d)
        if (!sameDispatch(a.dispatches[d], b.dispatches[d]))
            return false;
    for (uint32_t c = 0; c < a.constant_count; ++c)
        if (a.constants[c].size != b.constants[c].size ||
            std::memcmp(a.constants[c].bytes, b.constants[c].bytes, a.constants[c].size) != 0)
            return false;
    for (uint32_t s = 0; s < a.state_count; ++s)
        if (!sameFormat(a.states[s].format, b.states[s].format))
            return false;
    return true;
}

Result<std::shared_ptr<const ParameterSet>> changeParameters(const std::vector<StageParameterCheck>& stages,
                                                             const ParameterSet& now,
                                                             std::span<const FrameParameter> changes)
{
    // The changes by stage, in the order given.
    std::vector<std::vector<config::StageParameter>> by_stage(stages.size());
    for (const FrameParameter& change : changes) {
        if (change.stage < 1 || change.stage > stages.size())
            return fail(fmt::format("stage {}: the pipeline has stages 1 to {}", change.stage, stages.size()));
        const size_t k = change.stage - 1;
        const StageParameterCheck& stage = stages[k];
        const auto stageError = [&](const std::string& what) {
            return fail(fmt::format("stage {} ({}): {}", k + 1, stage.label, what));
        };
        if (now.blocks[k].empty())
            return stageError(fmt::format("{} has no parameter block, so no parameter of it changes per frame",
                                          stage.plugin->name()));
        const auto& schema = stage.plugin->params();
        const auto entry =
            std::find_if(schema.begin(), schema.end(), [&](const ParamSchema& s) { return s.name == change.key; });
        if (entry == schema.end())
            return stageError(unknownParameter(*stage.plugin, change.key));
        auto value = numericValue(*entry, change.values);
        if (!value)
            return stageError(value.error().message);
        by_stage[k].push_back({change.key, std::move(*value), {}});
    }

    auto next = std::make_shared<ParameterSet>();
    for (size_t k = 0; k < stages.size(); ++k) {
        const StageParameterCheck& stage = stages[k];
        if (by_stage[k].empty()) {
            next->params.push_back(now.params[k].copy());
            next->blocks.push_back(now.blocks[k]);
            continue;
        }
        const auto stageError = [&](const std::string& what) {
            return fail(fmt::format("stage {} ({}): {}", k + 1, stage.label, what));
        };
        auto params = resolveParams(*stage.plugin, written(*stage.plugin, now.params[k], by_stage[k]));
        if (!params)
            return stageError(params.error().message);
        auto out = stage.plugin->negotiate(stage.in, *params);
        if (!out)
            return stageError(out.error().message);
        auto plan = stage.plugin->plan(stage.in, *params, stage.output_image_planes);
        if (!plan)
            return stageError(plan.error().message);
        if (!sameFormat(*out, stage.out) || !samePlan(*plan, stage.plan))
            return stageError("these values change the stage's dispatches or its output, which a session keeps: "
                              "open a new session for them");
        auto block = stage.plugin->paramBlock(stage.in, *params);
        if (!block)
            return stageError(block.error().message);
        if (block->size() != now.blocks[k].size())
            return stageError(fmt::format("these values make a parameter block of {} bytes, not the session's {}",
                                          block->size(), now.blocks[k].size()));
        next->params.push_back(std::move(*params));
        next->blocks.push_back(std::move(*block));
    }
    return std::shared_ptr<const ParameterSet>(std::move(next));
}

} // namespace framecl::pipeline
