#pragma once

#include "config/config.hpp"
#include "pipeline/catalog.hpp"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"

namespace framecl::pipeline {

// Builds, through the program cache, every kernel file the pipelines use, so the
// first frame pays no compile and a kernel that does not build is reported at start.
// A kernel that fails to build is logged; the others are unaffected.
void warmPrograms(const std::vector<PipelineEntry>& pipelines, const std::vector<std::filesystem::path>& kernel_dirs,
                  const gpu::GpuContext& gpu, gpu::ProgramCache& programs);

} // namespace framecl::pipeline
