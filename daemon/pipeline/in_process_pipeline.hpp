#pragma once
// A pipeline run inside the calling process on frames in host memory: what
// `framecl process --in-process` uses, and a baseline for the daemon's round trip. It
// stages each frame through two device buffers and runs the same Session the daemon
// runs on client buffers.

#include <memory>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "gpu/context.hpp"
#include "pipeline/host_image.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

class InProcessPipeline {
public:
    static Result<InProcessPipeline> open(const gpu::GpuContext& gpu, std::shared_ptr<const PipelineDefinition> pipeline,
                                          const FrameShape& input, const SessionOptions& options);

    const FrameShape& outputShape() const { return session_->output(); }

    // Runs one frame of the input shape given at open; blocks until its output is back.
    Result<HostImage> process(const HostImage& input);

private:
    InProcessPipeline() = default;

    const gpu::GpuContext* gpu_ = nullptr;
    std::unique_ptr<Session> session_;
    framecl_frame_layout input_layout_{};
    framecl_frame_layout output_layout_{};
    uint64_t input_bytes_ = 0;
    uint64_t output_bytes_ = 0;
    cl::Buffer input_;
    cl::Buffer output_;
};

} // namespace framecl::pipeline
