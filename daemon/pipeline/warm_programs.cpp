#include "pipeline/warm_programs.hpp"

#include <set>

#include "base/log.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

void warmPrograms(const std::vector<PipelineEntry>& pipelines, const std::vector<std::filesystem::path>& kernel_dirs,
                  const gpu::GpuContext& gpu, gpu::ProgramCache& programs)
{
    auto logger = log::get("pipeline");
    std::set<std::string> kernel_files;
    for (const auto& pipeline : pipelines)
        for (const BuiltinStage* stage : pipeline.stages)
            kernel_files.insert(stage->kernel_file);

    size_t from_cache = 0, built = 0;
    for (const auto& file : kernel_files) {
        auto source = readKernelSource(kernel_dirs, file);
        if (!source) {
            logger->error("{}", source.error().message);
            continue;
        }
        auto program = programs.build(gpu.context()(), gpu.device(), gpu.capabilities(), *source, file, "");
        if (!program) {
            logger->error("{}", program.error().message);
            continue;
        }
        ++(program->origin == gpu::BuiltProgram::Origin::CacheHit ? from_cache : built);
    }
    logger->info("programs: {} ready ({} from the cache, {} built from source)", from_cache + built, from_cache,
                 built);
}

} // namespace framecl::pipeline
