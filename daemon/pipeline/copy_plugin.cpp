// The built-in `copy` plugin: each plane of a frame, unchanged (kernels/copy.cl). It
// backs the `copy` pipeline that framecld offers whatever the config says, to measure
// the transport (import, dispatch, completion) with no filter cost on top. Compiled
// into framecld, it goes through the same descriptor checks as any plugin.
#include <fmt/format.h>

#include "framecl/plugin.h"
#include "framecl_build_config.h"
#include "pipeline/plugin_registry.hpp"

namespace framecl::pipeline {
namespace {

// Writes the message the ABI's `error` buffer carries, cut to its size.
int refuse(char* error, size_t error_size, const std::string& message)
{
    const auto end = fmt::format_to_n(error, error_size - 1, "{}", message).out;
    *end = '\0';
    return 1;
}

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out,
              char* error, size_t error_size)
{
    framecl_frame_layout packed{};
    if (framecl_packed_layout(in->fourcc, in->width, in->height, &packed) == 0)
        return refuse(
            error, error_size,
            fmt::format("copy takes the formats of include/framecl/format.h at the sizes they allow, got "
                        "fourcc 0x{:08x} {}x{}",
                        in->fourcc, in->width, in->height));
    *out = *in;
    return 0;
}

framecl_arg planeArg(framecl_arg_kind kind, uint32_t plane)
{
    framecl_arg arg{};
    arg.kind = kind;
    arg.index = plane;
    return arg;
}

framecl_arg uintArg(uint32_t value)
{
    framecl_arg arg{};
    arg.kind = FRAMECL_ARG_UINT;
    arg.uint_value = value;
    return arg;
}

// One copy_plane dispatch per plane, one work item per 16 bytes of a row (the last one
// of a row may take fewer) and per row: the kernel copies bytes, so one dispatch serves
// every format.
int plan(const framecl_format* in, const framecl_param_value*, const framecl_plan_request*, framecl_plan* plan, char*, size_t)
{
    framecl_frame_layout packed{};
    const uint64_t total = framecl_packed_layout(in->fourcc, in->width, in->height, &packed);
    for (uint32_t p = 0; p < packed.num_planes; ++p) {
        const uint64_t plane_end = p + 1 < packed.num_planes ? packed.planes[p + 1].offset : total;
        const uint32_t row_bytes = packed.planes[p].stride;
        const uint32_t rows = uint32_t((plane_end - packed.planes[p].offset) / row_bytes);
        framecl_dispatch& dispatch = plan->dispatches[p];
        dispatch.kernel = "copy_plane";
        dispatch.kernel_file = 0;
        dispatch.dims = 2;
        dispatch.global[0] = (row_bytes + 15) / 16;
        dispatch.global[1] = rows;
        dispatch.tileable_axes = FRAMECL_AXIS_Y;
        dispatch.arg_count = 4;
        dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, p);
        dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, p);
        dispatch.args[2] = uintArg(row_bytes);
        dispatch.args[3] = uintArg(rows);
    }
    plan->dispatch_count = packed.num_planes;
    return 0;
}

// Pointwise (plugin.h, "Pointwise stages") for every input format, with copy_pointwise,
// which leaves the pixels as they are: the daemon fuses only the formats it can load.
int pointwise(const framecl_format*, const framecl_param_value*, framecl_pointwise* pointwise, char*, size_t)
{
    *pointwise = {.function = "copy_pointwise",
                  .kernel_file = 0,
                  .block_width = 1,
                  .block_height = 1,
                  .reads_input = 0,
                  .fused_loads = 0};
    return 0;
}

const char* const kernel_files[] = {"copy.cl"};

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "copy",
    .version = FRAMECL_VERSION,
    .description = "Each plane of the frame, unchanged",
    .param_count = 0,
    .params = nullptr,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
    .param_block = nullptr,
    .pointwise = pointwise,
};

} // namespace

const framecl_plugin& copyPluginDescriptor()
{
    return descriptor;
}

} // namespace framecl::pipeline
