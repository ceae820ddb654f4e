// The `color` plugin: colour conversions, as docs/filters.md specifies them; the
// kernels are in kernels/color.cl. The worked example of docs/plugin-guide.md.
//
// A stage chooses its conversion with `op`:
//   abgr_to_y  ABGR8888 -> R8, BT.601 luma
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

namespace {

// The values of `op`, in the order of the Op enum.
const char* const ops[] = {"abgr_to_y", nullptr};
enum Op { abgr_to_y };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_op, param_count };

const framecl_param_schema params[param_count] = {
    {
        .name = "op",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the conversion: abgr_to_y (ABGR8888 to BT.601 luma in R8)",
        .default_number = 0,
        .default_string = "abgr_to_y",
        .min = 0,
        .max = 0,
        .allowed = ops,
        .max_count = 0,
    },
};

const char* const kernel_files[] = {"color.cl"};

// The daemon has checked the value against `ops`.
Op opOf(const framecl_param_value* values)
{
    Op op = abgr_to_y;
    for (int i = 0; ops[i]; ++i)
        if (std::strcmp(values[param_op].string_value, ops[i]) == 0)
            op = Op(i);
    return op;
}

// A DRM fourcc as its four characters ("NV12"), trailing spaces dropped ("R8"). The
// daemon's format names are not for plugins: a plugin links nothing of framecld.
void fourccText(uint32_t fourcc, char text[5])
{
    for (int i = 0; i < 4; ++i)
        text[i] = char((fourcc >> (8 * i)) & 0xff);
    text[4] = '\0';
    for (int i = 3; i > 0 && text[i] == ' '; --i)
        text[i] = '\0';
}

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out,
              char* error, size_t error_size)
{
    switch (opOf(values)) {
    case abgr_to_y:
        if (in->fourcc != DRM_FORMAT_ABGR8888) {
            char got[5];
            fourccText(in->fourcc, got);
            std::snprintf(error, error_size, "input must be ABGR8888, got %s", got);
            return 1;
        }
        *out = {DRM_FORMAT_R8, in->width, in->height};
        return 0;
    }
    std::snprintf(error, error_size, "unknown op");
    return 1;
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

// abgr_to_y(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height):
// one work item per pixel. Each row is independent, so the daemon may split the
// dispatch into bands of rows to bound its GPU time.
void planAbgrToY(const framecl_format* in, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = "abgr_to_y";
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width;
    dispatch.global[1] = in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.arg_count = 4;
    plan->dispatch_count = 1;
}

// `in` is a format negotiate accepted, so only the op is left to choose.
int plan(const framecl_format* in, const framecl_param_value* values, framecl_plan* plan,
         char* error, size_t error_size)
{
    switch (opOf(values)) {
    case abgr_to_y:
        planAbgrToY(in, plan);
        return 0;
    }
    std::snprintf(error, error_size, "unknown op");
    return 1;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "color",
    .version = PLUGIN_VERSION,
    .description = "Colour conversions",
    .param_count = param_count,
    .params = params,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
