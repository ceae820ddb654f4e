#include "pipeline/engine.hpp"

namespace framecl::pipeline {

Result<Engine> startEngine(const config::Config& config)
{
    auto gpu = gpu::openGpu(config.gpu);
    if (!gpu)
        return tl::unexpected(gpu.error());
    Engine engine{std::move(*gpu), std::make_unique<gpu::ProgramCache>(config.daemon.cache_dir), {}};
    engine.pipelines = loadPipelineSet(config, engine.gpu.get(), engine.programs.get());
    return engine;
}

} // namespace framecl::pipeline
