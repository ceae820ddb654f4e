#pragma once

#include "config/config.hpp"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"

namespace framecl::pipeline {

// Builds, through the program cache, every kernel file the configured pipelines use,
// so the first frame pays no compile and a kernel that does not build is reported at
// start. A pipeline this build cannot run, or whose kernels fail to build, is logged
// and skipped; the others are unaffected.
void warmPrograms(const config::Config& config, const gpu::GpuContext& gpu, gpu::ProgramCache& programs);

} // namespace framecl::pipeline
