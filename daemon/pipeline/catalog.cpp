#include "pipeline/catalog.hpp"

#include <fmt/format.h>

#include "base/closest_name.hpp"
#include "known_formats.hpp"

namespace framecl::pipeline {
namespace {

// The size of the frames tried when checking that a pipeline's formats chain: the config
// names no input format, so a pipeline is valid if some format framecl holds passes every
// stage. Every format allows it (even, and a multiple of 4 for packed RAW10).
constexpr uint32_t probe_size = 64;

std::string location(const config::SourceLocation& where)
{
    return fmt::format("{}:{}:{}", where.file.string(), where.line, where.column);
}

std::string stageLabel(const config::Stage& stage)
{
    std::string label = stage.plugin;
    for (const auto& parameter : stage.parameters) {
        label += " " + parameter.key + "=";
        std::visit(
            [&](const auto& value) {
                using T = std::decay_t<decltype(value)>;
                if constexpr (std::is_same_v<T, std::vector<double>>)
                    label += fmt::format("[{}]", fmt::join(value, ","));
                else
                    label += fmt::format("{}", value);
            },
            parameter.value);
    }
    return label;
}

std::string unknownPlugin(const std::string& name, const PluginRegistry& registry)
{
    std::vector<std::string_view> names;
    for (const Plugin* plugin : registry.plugins())
        names.push_back(plugin->name());
    const std::string_view suggestion = closestName(name, names);
    return fmt::format("unknown plugin '{}'{} (loaded: {})", name,
                       suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion), fmt::join(names, ", "));
}

// Negotiates every stage for one input format; on failure says which stage refused.
struct ChainFailure {
    size_t stage;
    std::string message;
};
std::optional<ChainFailure> chain(const PipelineDefinition& pipeline, framecl_format format)
{
    for (size_t k = 0; k < pipeline.stages.size(); ++k) {
        auto out = pipeline.stages[k].plugin->negotiate(format, pipeline.stages[k].params);
        if (!out)
            return ChainFailure{k, out.error().message};
        format = *out;
    }
    return std::nullopt;
}

// Resolves one [[pipeline]]; the error is the problem line.
Result<std::shared_ptr<const PipelineDefinition>> resolve(const config::Pipeline& pipeline,
                                                          std::shared_ptr<const PluginRegistry> registry,
                                                          std::shared_ptr<const PluginPrograms> programs)
{
    auto definition = std::make_shared<PipelineDefinition>();
    definition->name = pipeline.name;
    definition->registry = registry;
    definition->programs = programs;
    definition->where = pipeline.where;
    definition->fuse = pipeline.fuse;
    for (size_t k = 0; k < pipeline.stages.size(); ++k) {
        const config::Stage& stage = pipeline.stages[k];
        const std::string prefix = fmt::format("pipeline '{}', stage {}", pipeline.name, k + 1);
        const Plugin* plugin = registry->find(stage.plugin);
        if (!plugin)
            return fail(fmt::format("{}: {}: {}", location(stage.where), prefix, unknownPlugin(stage.plugin, *registry)));
        if (programs && !programs->usable(*plugin))
            return fail(fmt::format("{}: {} ({}): the plugin's kernels did not build (see the log)",
                                    location(stage.where), prefix, stage.plugin));
        auto params = resolveParams(*plugin, stage.parameters);
        if (!params)
            return fail(fmt::format("{}: {} ({}): {}", location(params.error().where), prefix, stage.plugin,
                                    params.error().message));
        definition->stages.push_back({plugin, std::move(*params), stageLabel(stage), stage.where});
    }

    std::optional<ChainFailure> furthest;
    bool every_format_alike = true; // each refused at one stage with one message
    for (uint32_t fourcc : protocol::knownFormats()) {
        auto failure = chain(*definition, {fourcc, probe_size, probe_size});
        if (!failure)
            return std::shared_ptr<const PipelineDefinition>(std::move(definition));
        if (furthest && (failure->stage != furthest->stage || failure->message != furthest->message))
            every_format_alike = false;
        if (!furthest || failure->stage > furthest->stage)
            furthest = failure;
    }
    const auto& stage = definition->stages[furthest->stage];
    // A refusal that no input format changes is about the parameters (convolve's "kernel
    // has 8 values, ..."), not about formats: say it as the plugin does.
    if (every_format_alike)
        return fail(fmt::format("{}: pipeline '{}', stage {} ({}): {}", location(stage.where), pipeline.name,
                                furthest->stage + 1, stage.label, furthest->message));
    return fail(fmt::format("{}: pipeline '{}': formats do not chain at stage {} ({}): {} (no input format passes "
                            "every stage)",
                            location(stage.where), pipeline.name, furthest->stage + 1, stage.label, furthest->message));
}

} // namespace

std::shared_ptr<const PipelineDefinition> Catalog::find(const std::string& name) const
{
    for (const auto& pipeline : pipelines)
        if (pipeline->name == name)
            return pipeline;
    return nullptr;
}

Catalog buildCatalog(const config::Config& config, std::shared_ptr<const PluginRegistry> registry,
                     std::shared_ptr<const PluginPrograms> programs)
{
    Catalog catalog;
    // `copy` is offered whatever the config says: it measures the transport alone.
    config::Pipeline copy{"copy", {{"copy", {}, {}}}, true, {}};
    for (const config::Pipeline* pipeline : {&copy}) {
        auto definition = resolve(*pipeline, registry, programs);
        if (definition)
            catalog.pipelines.push_back(std::move(*definition));
        else
            catalog.problems.push_back(definition.error().message);
    }
    for (const auto& pipeline : config.pipelines) {
        auto definition = resolve(pipeline, registry, programs);
        if (definition) {
            catalog.pipelines.push_back(std::move(*definition));
        } else {
            catalog.problems.push_back(definition.error().message);
            catalog.left_out.emplace(pipeline.name, definition.error().message);
        }
    }
    return catalog;
}

PipelineSet loadPipelineSet(const config::Config& config, const gpu::GpuContext* gpu, gpu::ProgramCache* cache)
{
    PipelineSet set;
    set.registry = PluginRegistry::load(config.daemon.plugin_dirs);
    set.problems = set.registry->problems();
    if (gpu && cache) {
        // Only the plugins a pipeline uses: a driver compiles every kernel of a program,
        // which for every shipped plugin takes PoCL on a CPU over a minute at a first start.
        std::set<std::string> used{"copy"};
        for (const auto& pipeline : config.pipelines)
            for (const auto& stage : pipeline.stages)
                used.insert(stage.plugin);
        set.programs = PluginPrograms::build(set.registry, *gpu, *cache, config.daemon.kernel_dirs, used);
        set.problems.insert(set.problems.end(), set.programs->problems().begin(), set.programs->problems().end());
    }
    set.catalog = buildCatalog(config, set.registry, set.programs);
    set.problems.insert(set.problems.end(), set.catalog.problems.begin(), set.catalog.problems.end());
    return set;
}

} // namespace framecl::pipeline
