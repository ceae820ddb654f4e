#include "pipeline/in_process_pipeline.hpp"

#include <fmt/format.h>

#include "gpu/cl_error.hpp"

namespace framecl::pipeline {

Result<InProcessPipeline> InProcessPipeline::open(const gpu::GpuContext& gpu,
                                                  std::shared_ptr<const PipelineDefinition> definition,
                                                  const FrameShape& input, const SessionOptions& options)
{
    auto session = Session::open(gpu, std::move(definition), input, options);
    if (!session)
        return tl::unexpected(session.error());

    InProcessPipeline pipeline;
    pipeline.gpu_ = &gpu;
    pipeline.session_ = std::move(*session);
    const FrameShape& out = pipeline.session_->output();
    pipeline.input_bytes_ = framecl_packed_layout(input.fourcc, input.width, input.height, &pipeline.input_layout_);
    pipeline.output_bytes_ = framecl_packed_layout(out.fourcc, out.width, out.height, &pipeline.output_layout_);
    if (pipeline.input_bytes_ == 0 || pipeline.output_bytes_ == 0)
        return fail(fmt::format("{} cannot be laid out in host memory", describe(input)));

    cl_int err = CL_SUCCESS;
    pipeline.input_ = cl::Buffer(gpu.context(), CL_MEM_READ_ONLY, pipeline.input_bytes_, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "in-process input"));
    pipeline.output_ = cl::Buffer(gpu.context(), CL_MEM_WRITE_ONLY, pipeline.output_bytes_, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "in-process output"));
    return pipeline;
}

Result<HostImage> InProcessPipeline::process(const HostImage& input)
{
    const FrameShape shape{input.fourcc, input.width, input.height};
    if (!sameShape(shape, session_->input()) || input.bytes.size() != input_bytes_)
        return fail(fmt::format("frame is {}, the pipeline was opened for {}", describe(shape),
                                describe(session_->input())));

    const cl::CommandQueue& queue = gpu_->queue();
    cl_int err = queue.enqueueWriteBuffer(input_, CL_FALSE, 0, input_bytes_, input.bytes.data());
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueWriteBuffer", err, "in-process input"));
    auto frame = session_->enqueue({input_(), &input_layout_}, {output_(), &output_layout_});
    if (!frame)
        return tl::unexpected(frame.error());

    const FrameShape& out = session_->output();
    HostImage result{out.fourcc, out.width, out.height, std::vector<uint8_t>(output_bytes_)};
    err = queue.enqueueReadBuffer(output_, CL_TRUE, 0, output_bytes_, result.bytes.data());
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueReadBuffer", err, "in-process output"));
    return result;
}

} // namespace framecl::pipeline
