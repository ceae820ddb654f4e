#include "pipeline/builtin_stages.hpp"

#include <fmt/format.h>

#include "framecl/format.h"

namespace framecl::pipeline {
namespace {

Result<FrameShape> negotiateCopy(const FrameShape& in)
{
    if (!framecl_format_name(in.fourcc))
        return fail("copy: unknown pixel format");
    return in;
}

// One copy_plane dispatch per plane, each over the plane's row bytes and rows.
std::vector<DispatchPlan> planCopy(const FrameShape& in)
{
    framecl_frame_layout packed{};
    const uint64_t total = framecl_packed_layout(in.fourcc, in.width, in.height, &packed);
    std::vector<DispatchPlan> dispatches;
    for (uint32_t p = 0; p < packed.num_planes; ++p) {
        const uint64_t plane_end = p + 1 < packed.num_planes ? packed.planes[p + 1].offset : total;
        const uint32_t row_bytes = packed.planes[p].stride;
        const uint32_t rows = uint32_t((plane_end - packed.planes[p].offset) / row_bytes);
        dispatches.push_back({"copy_plane",
                              {row_bytes, rows},
                              {PlaneArg{PlaneArg::Side::Input, p}, PlaneArg{PlaneArg::Side::Output, p}, row_bytes, rows}});
    }
    return dispatches;
}

Result<FrameShape> negotiateAbgrToY(const FrameShape& in)
{
    if (in.fourcc != DRM_FORMAT_ABGR8888)
        return fail(fmt::format("color op=abgr_to_y: input must be ABGR8888, got {}", describe(in)));
    return FrameShape{DRM_FORMAT_R8, in.width, in.height};
}

std::vector<DispatchPlan> planAbgrToY(const FrameShape& in)
{
    return {{"abgr_to_y",
             {in.width, in.height},
             {PlaneArg{PlaneArg::Side::Input, 0}, PlaneArg{PlaneArg::Side::Output, 0}, in.width, in.height}}};
}

const BuiltinStage copy_stage{"copy", "", "copy.cl", negotiateCopy, planCopy};

const std::array<BuiltinStage, 2> builtin_stages{{
    copy_stage,
    {"color", "abgr_to_y", "color.cl", negotiateAbgrToY, planAbgrToY},
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

std::string describe(const FrameShape& shape)
{
    const char* name = framecl_format_name(shape.fourcc);
    return fmt::format("{} {}x{}", name ? name : fmt::format("fourcc 0x{:08x}", shape.fourcc), shape.width,
                       shape.height);
}

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
        known += fmt::format("{}{}", known.empty() ? "" : ", ", builtin.name());
    return fail(fmt::format("{}:{}: stage '{}{}' is not available in this build (available: {})",
                            stage.where.file.string(), stage.where.line, stage.plugin,
                            op.empty() ? "" : " op=" + op, known));
}

} // namespace framecl::pipeline
