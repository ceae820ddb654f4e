#include "pipeline/session.hpp"

#include <map>

#include <fmt/format.h>

#include "base/read_file.hpp"
#include "gpu/cl_error.hpp"

namespace framecl::pipeline {
namespace {

namespace fs = std::filesystem;

FrameShape shapeOf(const framecl_frame_layout& layout)
{
    return {layout.fourcc, layout.width, layout.height};
}

Result<void> checkShape(const framecl_frame_layout& layout, const FrameShape& wanted, const char* role)
{
    if (shapeOf(layout) == wanted)
        return {};
    return fail(fmt::format("{} buffer holds {}, the session {} {}", role, describe(shapeOf(layout)),
                            role[0] == 'i' ? "reads" : "writes", describe(wanted)));
}

// Sets one kernel argument, naming the kernel and the argument on failure.
template <typename T> Result<void> setArg(cl::Kernel& kernel, const std::string& name, cl_uint index, const T& value)
{
    if (cl_int err = kernel.setArg(index, value); err != CL_SUCCESS)
        return fail(gpu::clFailure("clSetKernelArg", err, fmt::format("{} argument {}", name, index)));
    return {};
}

Result<void> setPlaneArgs(cl::Kernel& kernel, const std::string& name, cl_uint index, cl_mem mem,
                          const framecl_plane& plane)
{
    // Not cl::Kernel::setArg: for a pointer type such as cl_mem it picks the SVM
    // overload (clSetKernelArgSVMPointer) when built for OpenCL 2.0 and later.
    if (cl_int err = clSetKernelArg(kernel(), index, sizeof mem, &mem); err != CL_SUCCESS)
        return fail(gpu::clFailure("clSetKernelArg", err, fmt::format("{} argument {}", name, index)));
    if (auto r = setArg(kernel, name, index + 1, cl_uint(plane.offset)); !r)
        return r;
    return setArg(kernel, name, index + 2, cl_uint(plane.stride));
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

Result<std::unique_ptr<Session>> Session::open(const gpu::GpuContext& gpu, gpu::ProgramCache& programs,
                                               const std::vector<fs::path>& kernel_dirs, std::string pipeline_name,
                                               const std::vector<const BuiltinStage*>& stages,
                                               const FrameShape& input)
{
    if (stages.empty())
        return fail("a pipeline needs at least one stage");
    if (input.width == 0 || input.height == 0)
        return fail(fmt::format("frame size {}x{} is empty", input.width, input.height));

    std::unique_ptr<Session> session(new Session(gpu, std::move(pipeline_name), input));

    // Shapes stage by stage: shapes[k] enters stage k, shapes[k + 1] leaves it.
    std::vector<FrameShape> shapes{input};
    for (const BuiltinStage* stage : stages) {
        auto out = stage->negotiate(shapes.back());
        if (!out)
            return tl::unexpected(out.error());
        shapes.push_back(*out);
        session->stage_names_.push_back(stage->name());
    }
    session->output_ = shapes.back();

    // Intermediates live on the device only: the host never reads them.
    cl_int err = CL_SUCCESS;
    for (size_t k = 1; k + 1 < shapes.size(); ++k) {
        framecl_frame_layout layout{};
        const uint64_t bytes = framecl_packed_layout(shapes[k].fourcc, shapes[k].width, shapes[k].height, &layout);
        session->intermediates_.emplace_back(gpu.context(), CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, bytes, nullptr,
                                             &err);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateBuffer", err, "intermediate after " + stages[k - 1]->name()));
        session->intermediate_layouts_.push_back(layout);
    }

    std::map<std::string, cl::Program> built; // kernel file -> program, within this open
    for (size_t k = 0; k < stages.size(); ++k) {
        const BuiltinStage& stage = *stages[k];
        if (!built.count(stage.kernel_file)) {
            auto source = readKernelSource(kernel_dirs, stage.kernel_file);
            if (!source)
                return tl::unexpected(source.error());
            auto program = programs.build(gpu.context()(), gpu.device(), gpu.capabilities(), *source,
                                          stage.kernel_file, "");
            if (!program)
                return tl::unexpected(program.error());
            built.emplace(stage.kernel_file, std::move(program->program));
        }

        const bool first = k == 0, last = k + 1 == stages.size();
        for (const DispatchPlan& plan : stage.plan(shapes[k])) {
            Dispatch dispatch{plan.kernel_name, k, cl::Kernel(built.at(stage.kernel_file), plan.kernel_name.c_str(), &err),
                              cl::NDRange(plan.global[0], plan.global[1]), {}};
            if (err != CL_SUCCESS)
                return fail(gpu::clFailure("clCreateKernel", err, plan.kernel_name));
            cl_uint index = 0;
            for (const DispatchArg& arg : plan.args) {
                if (const auto* value = std::get_if<uint32_t>(&arg)) {
                    if (auto r = setArg(dispatch.kernel, plan.kernel_name, index++, cl_uint(*value)); !r)
                        return tl::unexpected(r.error());
                    continue;
                }
                const PlaneArg& plane = std::get<PlaneArg>(arg);
                const bool reads_frame = plane.side == PlaneArg::Side::Input && first;
                const bool writes_frame = plane.side == PlaneArg::Side::Output && last;
                if (reads_frame || writes_frame) {
                    dispatch.frame_args.push_back({index, plane.side, plane.plane});
                } else {
                    const size_t i = plane.side == PlaneArg::Side::Input ? k - 1 : k;
                    const auto& layout = session->intermediate_layouts_[i];
                    if (auto r = setPlaneArgs(dispatch.kernel, plan.kernel_name, index,
                                              session->intermediates_[i](), layout.planes[plane.plane]);
                        !r)
                        return tl::unexpected(r.error());
                }
                index += 3;
            }
            session->dispatches_.push_back(std::move(dispatch));
        }
    }
    return session;
}

Result<void> Session::checkInput(const framecl_frame_layout& layout) const
{
    return checkShape(layout, input_, "input");
}

Result<void> Session::checkOutput(const framecl_frame_layout& layout) const
{
    return checkShape(layout, output_, "output");
}

Result<EnqueuedFrame> Session::enqueue(const FrameBuffer& in, const FrameBuffer& out)
{
    EnqueuedFrame frame;
    frame.events.reserve(dispatches_.size());
    for (Dispatch& dispatch : dispatches_) {
        for (const FrameArg& arg : dispatch.frame_args) {
            const FrameBuffer& buffer = arg.side == PlaneArg::Side::Input ? in : out;
            if (auto r = setPlaneArgs(dispatch.kernel, dispatch.kernel_name, arg.index, buffer.mem,
                                      buffer.layout->planes[arg.plane]);
                !r)
                return tl::unexpected(r.error());
        }
        cl::Event event;
        const cl_int err =
            gpu_->queue().enqueueNDRangeKernel(dispatch.kernel, cl::NullRange, dispatch.global, cl::NullRange, nullptr,
                                               &event);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clEnqueueNDRangeKernel", err, dispatch.kernel_name));
        frame.events.push_back(std::move(event));
    }
    return frame;
}

std::vector<uint64_t> Session::stageTimes(const EnqueuedFrame& frame) const
{
    std::vector<uint64_t> times(stage_names_.size(), 0);
    for (size_t i = 0; i < frame.events.size() && i < dispatches_.size(); ++i) {
        cl_ulong start = 0, end = 0;
        if (frame.events[i].getProfilingInfo(CL_PROFILING_COMMAND_START, &start) == CL_SUCCESS &&
            frame.events[i].getProfilingInfo(CL_PROFILING_COMMAND_END, &end) == CL_SUCCESS && end >= start)
            times[dispatches_[i].stage] += end - start;
    }
    return times;
}

} // namespace framecl::pipeline
