#include "pipeline/builtin_stages.hpp"

#include <array>
#include <variant>

#include <drm_fourcc.h>
#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "pipeline/host_image.hpp"

namespace framecl::pipeline {
namespace {

Result<FrameShape> negotiateCopy(const FrameShape& in)
{
    if (bytesPerPixel(in.fourcc) == 0)
        return fail(fmt::format("copy: format {} is not supported yet", formatName(in.fourcc)));
    return in;
}

Result<std::vector<size_t>> bindCopy(cl_kernel kernel, cl_mem in, cl_mem out, const FrameShape& shape)
{
    cl_int err = clSetKernelArg(kernel, 0, sizeof in, &in);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, 1, sizeof out, &out);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clSetKernelArg", err, "copy_bytes"));
    return std::vector<size_t>{size_t(shape.width) * shape.height * bytesPerPixel(shape.fourcc)};
}

Result<FrameShape> negotiateAbgrToY(const FrameShape& in)
{
    if (in.fourcc != DRM_FORMAT_ABGR8888)
        return fail(fmt::format("color op=abgr_to_y: input must be ABGR8888, got {}", formatName(in.fourcc)));
    return FrameShape{DRM_FORMAT_R8, in.width, in.height};
}

Result<std::vector<size_t>> bindAbgrToY(cl_kernel kernel, cl_mem in, cl_mem out, const FrameShape& shape)
{
    const cl_uint src_stride_px = shape.width, dst_stride = shape.width;
    const cl_uint width = shape.width, height = shape.height;
    const std::array<std::pair<size_t, const void*>, 6> args{{
        {sizeof in, &in},
        {sizeof src_stride_px, &src_stride_px},
        {sizeof out, &out},
        {sizeof dst_stride, &dst_stride},
        {sizeof width, &width},
        {sizeof height, &height},
    }};
    for (cl_uint i = 0; i < args.size(); ++i)
        if (cl_int err = clSetKernelArg(kernel, i, args[i].first, args[i].second); err != CL_SUCCESS)
            return fail(gpu::clFailure("clSetKernelArg", err, fmt::format("abgr_to_y arg {}", i)));
    return std::vector<size_t>{shape.width, shape.height};
}

const BuiltinStage copy_stage{"copy", "", "copy.cl", "copy_bytes", negotiateCopy, bindCopy};

const std::array<BuiltinStage, 2> builtin_stages{{
    copy_stage,
    {"color", "abgr_to_y", "color.cl", "abgr_to_y", negotiateAbgrToY, bindAbgrToY},
}};

std::string stageOp(const config::Stage& stage)
{
    for (const auto& parameter : stage.parameters)
        if (parameter.key == "op")
            if (const auto* op = std::get_if<std::string>(&parameter.value))
                return *op;
    return {};
}

} // namespace

const BuiltinStage& copyStage()
{
    return copy_stage;
}

Result<const BuiltinStage*> findBuiltinStage(const config::Stage& stage)
{
    const std::string op = stageOp(stage);
    for (const auto& builtin : builtin_stages)
        if (builtin.plugin == stage.plugin && builtin.op == op)
            return &builtin;

    std::string known;
    for (const auto& builtin : builtin_stages)
        known += fmt::format("{}{}{}", known.empty() ? "" : ", ", builtin.plugin,
                             builtin.op.empty() ? "" : " op=" + builtin.op);
    return fail(fmt::format("{}:{}: stage '{}{}' is not available in this build (available: {})",
                            stage.where.file.string(), stage.where.line, stage.plugin,
                            op.empty() ? "" : " op=" + op, known));
}

} // namespace framecl::pipeline
