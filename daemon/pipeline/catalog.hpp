#pragma once
// The pipelines framecld offers: the built-in `copy`, then the config's [[pipeline]]
// tables whose every stage this build can run.

#include <string>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "pipeline/builtin_stages.hpp"

namespace framecl::pipeline {

struct PipelineEntry {
    std::string name;
    std::vector<const BuiltinStage*> stages;
};

// The stages of pipeline `name`, or an error naming the configured pipelines or the
// stage that cannot run.
Result<std::vector<const BuiltinStage*>> resolvePipeline(const config::Config& config, const std::string& name);

// Every pipeline that can run, `copy` first. Those that cannot are logged once each.
std::vector<PipelineEntry> runnablePipelines(const config::Config& config);

} // namespace framecl::pipeline
