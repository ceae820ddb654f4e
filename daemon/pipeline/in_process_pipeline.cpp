#include "pipeline/in_process_pipeline.hpp"


#include <fmt/format.h>

#include "base/read_file.hpp"
#include "gpu/cl_error.hpp"

namespace framecl::pipeline {
namespace {

namespace fs = std::filesystem;

size_t frameBytes(const FrameShape& shape)
{
    return size_t(shape.width) * shape.height * bytesPerPixel(shape.fourcc);
}

} // namespace

Result<std::string> readKernelSource(const std::vector<fs::path>& kernel_dirs, const std::string& file)
{
    std::string searched;
    for (const auto& dir : kernel_dirs) {
        if (auto text = readFile(dir / file))
            return std::move(*text);
        searched += fmt::format("{}{}", searched.empty() ? "" : ", ", dir.string());
    }
    return fail(fmt::format("kernel file '{}' not found in daemon.kernel_dirs ({})", file, searched));
}

Result<std::vector<const BuiltinStage*>> resolvePipeline(const config::Config& config, const std::string& name)
{
    if (name == "copy")
        return std::vector<const BuiltinStage*>{&copyStage()};
    for (const auto& pipeline : config.pipelines) {
        if (pipeline.name != name)
            continue;
        std::vector<const BuiltinStage*> stages;
        for (const auto& stage : pipeline.stages) {
            auto builtin = findBuiltinStage(stage);
            if (!builtin)
                return fail(fmt::format("pipeline '{}': {}", name, builtin.error().message));
            stages.push_back(*builtin);
        }
        return stages;
    }
    std::string known = "copy";
    for (const auto& pipeline : config.pipelines)
        known += ", " + pipeline.name;
    return fail(fmt::format("no pipeline named '{}' (configured: {})", name, known));
}

Result<InProcessPipeline> InProcessPipeline::open(const gpu::GpuContext& gpu, gpu::ProgramCache& programs,
                                                  const std::vector<fs::path>& kernel_dirs,
                                                  const std::vector<const BuiltinStage*>& stages,
                                                  const FrameShape& input)
{
    if (stages.empty())
        return fail("a pipeline needs at least one stage");
    if (input.width == 0 || input.height == 0)
        return fail(fmt::format("frame size {}x{} is empty", input.width, input.height));

    InProcessPipeline pipeline(gpu, input);
    cl_int err = CL_SUCCESS;
    pipeline.input_ = cl::Buffer(gpu.context(), CL_MEM_READ_ONLY, frameBytes(input), nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "pipeline input"));

    FrameShape shape = input;
    cl_mem previous = pipeline.input_();
    for (const BuiltinStage* stage : stages) {
        auto out = stage->negotiate(shape);
        if (!out)
            return tl::unexpected(out.error());

        auto source = readKernelSource(kernel_dirs, stage->kernel_file);
        if (!source)
            return tl::unexpected(source.error());
        auto program = programs.build(gpu.context()(), gpu.device(), gpu.capabilities(), *source, stage->kernel_file, "");
        if (!program)
            return tl::unexpected(program.error());

        OpenStage open{stage->kernel_name, cl::Kernel(program->program, stage->kernel_name.c_str(), &err), *out, {}, {}};
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateKernel", err, stage->kernel_name));
        open.output = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, frameBytes(*out), nullptr, &err);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateBuffer", err, stage->kernel_name + " output"));

        auto global = stage->bind(open.kernel(), previous, open.output(), shape);
        if (!global)
            return tl::unexpected(global.error());
        open.global = global->size() == 1 ? cl::NDRange((*global)[0]) : cl::NDRange((*global)[0], (*global)[1]);

        previous = open.output();
        shape = *out;
        pipeline.stages_.push_back(std::move(open));
    }
    return pipeline;
}

Result<HostImage> InProcessPipeline::process(const HostImage& input)
{
    if (input.fourcc != input_shape_.fourcc || input.width != input_shape_.width ||
        input.height != input_shape_.height || input.bytes.size() != frameBytes(input_shape_))
        return fail(fmt::format("frame is {} {}x{}, the pipeline was opened for {} {}x{}", formatName(input.fourcc),
                                input.width, input.height, formatName(input_shape_.fourcc), input_shape_.width,
                                input_shape_.height));

    const cl::CommandQueue& queue = gpu_->queue();
    cl_int err = queue.enqueueWriteBuffer(input_, CL_FALSE, 0, input.bytes.size(), input.bytes.data());
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueWriteBuffer", err, "pipeline input"));
    for (const auto& stage : stages_) {
        err = queue.enqueueNDRangeKernel(stage.kernel, cl::NullRange, stage.global, cl::NullRange);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clEnqueueNDRangeKernel", err, stage.kernel_name));
    }

    const FrameShape& out = outputShape();
    HostImage result{out.fourcc, out.width, out.height, std::vector<uint8_t>(frameBytes(out))};
    err = queue.enqueueReadBuffer(stages_.back().output, CL_TRUE, 0, result.bytes.size(), result.bytes.data());
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueReadBuffer", err, "pipeline output"));
    return result;
}

} // namespace framecl::pipeline
