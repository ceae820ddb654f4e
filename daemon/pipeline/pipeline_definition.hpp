#pragma once
// A pipeline resolved against the loaded plugins: each stage's plugin and checked
// parameters. Sessions hold it by shared_ptr, together with the plugins and programs
// it uses, so a SIGHUP that loads new plugins leaves open sessions on the version they
// were opened with.

#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "pipeline/plugin_params.hpp"
#include "pipeline/plugin_registry.hpp"

namespace framecl::pipeline {

struct StageDefinition {
    const Plugin* plugin;
    ResolvedParams params;
    std::string label; // "offset amount=10": the plugin and the parameters the config set
    config::SourceLocation where;
};

struct PipelineDefinition {
    std::string name;
    std::vector<StageDefinition> stages;
    // Sessions fuse pointwise stages (pipeline/fusion.hpp); the config's `fuse`.
    bool fuse = true;
    std::shared_ptr<const PluginRegistry> registry; // keeps the plugins loaded
    std::shared_ptr<const PluginPrograms> programs; // their kernels, built
    config::SourceLocation where;
};

// "ABGR8888 640x480"
std::string describe(const framecl_format& format);

} // namespace framecl::pipeline
