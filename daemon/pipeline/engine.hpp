#pragma once
// What a program that runs pipelines starts from its config, each part needing the one
// before: the device (gpu.device), the program cache (daemon.cache_dir), and the
// plugins and pipelines with their kernels built on that device through that cache.
// framecld, its --compile-ahead helper, the CLI's in-process mode, framecl-bench and
// framecl-transport-bench each start one.

#include <memory>

#include "base/result.hpp"
#include "config/config.hpp"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"
#include "pipeline/catalog.hpp"

namespace framecl::pipeline {

struct Engine {
    std::unique_ptr<gpu::GpuContext> gpu;
    // Held apart: framecld builds its pipelines anew through it at each reload.
    std::unique_ptr<gpu::ProgramCache> programs;
    // What was refused on the way is in `pipelines.problems`, for the program to log or
    // print as it does.
    PipelineSet pipelines;
};

// Fails only where no device opens (with why); a plugin or pipeline that could not be
// built is a problem in the set, and the others are served.
Result<Engine> startEngine(const config::Config& config);

} // namespace framecl::pipeline
