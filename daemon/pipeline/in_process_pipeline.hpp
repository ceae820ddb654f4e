#pragma once
// A pipeline run inside the calling process on frames in host memory: what
// `framecl process --in-process` uses, and the baseline the daemon's round trip is
// measured against. Opening it builds every kernel, allocates every buffer and binds
// every argument once; a frame then costs one upload, the dispatches and one download.

#include <filesystem>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "config/config.hpp"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"
#include "pipeline/builtin_stages.hpp"
#include "pipeline/host_image.hpp"

namespace framecl::pipeline {

// The text of kernel source `file`, from the first of `kernel_dirs` holding it.
Result<std::string> readKernelSource(const std::vector<std::filesystem::path>& kernel_dirs, const std::string& file);

// The stages of pipeline `name`: the built-in `copy`, or a [[pipeline]] of the config.
Result<std::vector<const BuiltinStage*>> resolvePipeline(const config::Config& config, const std::string& name);

class InProcessPipeline {
public:
    static Result<InProcessPipeline> open(const gpu::GpuContext& gpu, gpu::ProgramCache& programs,
                                          const std::vector<std::filesystem::path>& kernel_dirs,
                                          const std::vector<const BuiltinStage*>& stages, const FrameShape& input);

    const FrameShape& outputShape() const { return stages_.back().out; }

    // Runs one frame of the input shape given at open; blocks until its output is back.
    Result<HostImage> process(const HostImage& input);

private:
    struct OpenStage {
        std::string kernel_name;
        cl::Kernel kernel;
        FrameShape out;
        cl::Buffer output;
        cl::NDRange global;
    };

    InProcessPipeline(const gpu::GpuContext& gpu, FrameShape input) : gpu_(&gpu), input_shape_(input) {}

    const gpu::GpuContext* gpu_;
    FrameShape input_shape_;
    cl::Buffer input_;
    std::vector<OpenStage> stages_;
};

} // namespace framecl::pipeline
