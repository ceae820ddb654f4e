#include "pipeline/catalog.hpp"

#include <fmt/format.h>

#include "base/log.hpp"

namespace framecl::pipeline {

Result<std::vector<const BuiltinStage*>> resolvePipeline(const config::Config& config, const std::string& name)
{
    if (name == "copy")
        return std::vector<const BuiltinStage*>{&copyStage()};
    for (const auto& pipeline : config.pipelines) {
        if (pipeline.name != name)
            continue;
        std::vector<const BuiltinStage*> stages;
        for (const auto& stage : pipeline.stages) {
            auto builtin = findBuiltinStage(stage);
            if (!builtin)
                return fail(fmt::format("pipeline '{}': {}", name, builtin.error().message));
            stages.push_back(*builtin);
        }
        return stages;
    }
    std::string known = "copy";
    for (const auto& pipeline : config.pipelines)
        known += ", " + pipeline.name;
    return fail(fmt::format("no pipeline named '{}' (configured: {})", name, known));
}

std::vector<PipelineEntry> runnablePipelines(const config::Config& config)
{
    std::vector<PipelineEntry> entries{{"copy", {&copyStage()}}};
    for (const auto& pipeline : config.pipelines) {
        auto stages = resolvePipeline(config, pipeline.name);
        if (!stages) {
            log::get("pipeline")->warn("{}", stages.error().message);
            continue;
        }
        entries.push_back({pipeline.name, std::move(*stages)});
    }
    return entries;
}

} // namespace framecl::pipeline
