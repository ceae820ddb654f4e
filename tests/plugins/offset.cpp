// Test plugin `offset`: adds `amount` to every pixel of an R8 frame, saturating at 0
// and 255 (tests/support/reference_offset.hpp). A small real plugin with an INT
// parameter and its own kernel file, offset.cl next to it.
#include <cstdio>

#include <framecl/plugin.h>

namespace {

enum Param { param_amount, param_count };

const framecl_param_schema params[param_count] = {
    {
        .name = "amount",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "added to each pixel; results saturate at 0 and 255",
        .default_number = 0,
        .default_string = nullptr,
        .min = -255,
        .max = 255,
        .allowed = nullptr,
        .max_count = 0,
    },
};

const char* const kernel_files[] = {"offset.cl"};

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out,
              char* error, size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_R8) {
        std::snprintf(error, error_size, "input must be R8, got fourcc 0x%08x", in->fourcc);
        return 1;
    }
    *out = *in;
    return 0;
}

framecl_arg arg(framecl_arg_kind kind)
{
    framecl_arg a{};
    a.kind = kind;
    return a;
}

// offset_r8(src, src_offset, src_stride, dst, dst_offset, dst_stride, amount, width,
// height): one work item per pixel, rows independent.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*, framecl_plan* plan, char*,
         size_t)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = "offset_r8";
    dispatch.dims = 2;
    dispatch.global[0] = in->width;
    dispatch.global[1] = in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_Y;
    dispatch.args[0] = arg(FRAMECL_ARG_INPUT_PLANE);
    dispatch.args[1] = arg(FRAMECL_ARG_OUTPUT_PLANE);
    dispatch.args[2] = arg(FRAMECL_ARG_INT);
    dispatch.args[2].int_value = int32_t(values[param_amount].int_value);
    dispatch.args[3] = arg(FRAMECL_ARG_UINT);
    dispatch.args[3].uint_value = in->width;
    dispatch.args[4] = arg(FRAMECL_ARG_UINT);
    dispatch.args[4].uint_value = in->height;
    dispatch.arg_count = 5;
    plan->dispatch_count = 1;
    return 0;
}

// A parameter block its kernel never reads, while `amount` travels in the plan: the
// daemon must refuse to change `amount` per frame, as the recorded plan holds it
// (tests/integration/frame_parameters_test.cpp).
int paramBlock(const framecl_format*, const framecl_param_value*, uint8_t* block, uint32_t, uint32_t* used, char*,
               size_t)
{
    block[0] = 1;
    *used = 1;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "offset",
    .version = "1.0",
    .description = "Adds a constant to an R8 frame, saturating",
    .param_count = param_count,
    .params = params,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
    .param_block = paramBlock,
    .pointwise = nullptr,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
