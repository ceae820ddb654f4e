#pragma once
// The pipelines framecld offers: the built-in `copy`, then every [[pipeline]] of the
// config resolved against the loaded plugins — each stage's plugin found, its
// parameters checked against the plugin's schema, and the formats chained stage by
// stage. A pipeline that fails a check is left out and its problem reported with the
// file and line; the others are offered. `framecld --check-config` fails on any
// problem; the daemon logs them and serves the rest.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"
#include "pipeline/pipeline_definition.hpp"

namespace framecl::pipeline {

struct Catalog {
    std::vector<std::shared_ptr<const PipelineDefinition>> pipelines; // `copy` first
    std::vector<std::string> problems; // "file:line:column: pipeline 'p', stage 2 (x): ..."
    // The config's pipelines that are not offered, each with its problem: what a client
    // asking for one is told.
    std::map<std::string, std::string> left_out;

    std::shared_ptr<const PipelineDefinition> find(const std::string& name) const;
};

// `programs` may be null (no device, as in --check-config): kernels are then not
// checked. With programs, a stage whose plugin's kernels did not build is a problem.
Catalog buildCatalog(const config::Config& config, std::shared_ptr<const PluginRegistry> registry,
                     std::shared_ptr<const PluginPrograms> programs);

// Everything a config's pipelines need: the plugins of daemon.plugin_dirs, their
// kernels built on `gpu` through `cache` (when a device is given), and the catalog.
// `problems` gathers what was refused on the way, each one line, for the caller to
// log or print.
struct PipelineSet {
    std::shared_ptr<const PluginRegistry> registry;
    std::shared_ptr<const PluginPrograms> programs; // null without a device
    Catalog catalog;
    std::vector<std::string> problems; // plugins refused, kernels that failed, pipelines left out
};
PipelineSet loadPipelineSet(const config::Config& config, const gpu::GpuContext* gpu, gpu::ProgramCache* cache);

} // namespace framecl::pipeline
