// The `color` plugin: colour conversions, as docs/filters.md specifies them; the
// kernels and the pointwise functions (plugin.h, "Pointwise stages") are in
// kernels/color.cl. The worked example of docs/plugin-guide.md.
//
// A stage chooses its conversion with `op`:
//   abgr_to_y     ABGR8888 -> R8, BT.601 luma
//   nv12_to_y     NV12 -> R8, the Y plane unchanged
//   nv12_to_abgr  NV12 -> ABGR8888, with `matrix` (bt601, bt709) and `range` (limited, full)
//   abgr_to_nv12  ABGR8888 -> NV12, with `matrix` and `range`
// and `variant`, the work per work item of nv12_to_abgr (the other ops ignore it: they
// have one kernel each):
//   block2x2    one 2x2 block, which shares one Cb, Cr pair (the first kernel)
//   block8x2    8x2 pixels, with aligned 8- and 16-byte loads and stores
//   block16x2   16x2 pixels, with aligned 16-byte loads and stores
//
// The constants nv12_to_abgr and abgr_to_nv12 fold from `matrix` and `range` travel in
// the stage's parameter block, not as kernel arguments, so that the pointwise functions
// (which receive only the block) read the very numbers the kernels do.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// The values of `op`, in the order of the Op enum.
const char* const ops[] = {"abgr_to_y", "nv12_to_y", "nv12_to_abgr", "abgr_to_nv12", nullptr};
enum Op { abgr_to_y, nv12_to_y, nv12_to_abgr, abgr_to_nv12 };
// Each op's pointwise function in kernels/color.cl, in the same order.
const char* const pointwise_functions[] = {"abgr_to_y_pointwise", "nv12_to_y_pointwise", "nv12_to_abgr_pointwise",
                                           "abgr_to_nv12_pointwise"};

// The values of `matrix` and `range`, in the order of their enums.
const char* const matrices[] = {"bt601", "bt709", nullptr};
enum Matrix { bt601, bt709 };
const char* const ranges[] = {"limited", "full", nullptr};
enum Range { limited, full };

// The values of `variant`, in the order of the Variant enum.
const char* const variants[] = {"auto", "block2x2", "block8x2", "block16x2", nullptr};
enum Variant { variant_auto, block2x2, block8x2, block16x2 };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_op, param_matrix, param_range, param_variant, param_count };

const framecl_param_schema params[param_count] = {
    {
        .name = "op",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the conversion: abgr_to_y (ABGR8888 to BT.601 luma in R8), nv12_to_y (the Y plane of "
                "NV12 as R8), nv12_to_abgr (NV12 to ABGR8888, alpha 255), abgr_to_nv12 (ABGR8888 to NV12)",
        .default_number = 0,
        .default_string = "abgr_to_y",
        .min = 0,
        .max = 0,
        .allowed = ops,
        .max_count = 0,
    },
    {
        .name = "matrix",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the YCbCr matrix of nv12_to_abgr and abgr_to_nv12: bt601 (Kr 0.299, Kb 0.114) or bt709 (Kr "
                "0.2126, Kb 0.0722)",
        .default_number = 0,
        .default_string = "bt601",
        .min = 0,
        .max = 0,
        .allowed = matrices,
        .max_count = 0,
    },
    {
        .name = "range",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the code range of nv12_to_abgr's input and abgr_to_nv12's output: limited (Y 16-235, Cb and Cr "
                "16-240) or full (0-255)",
        .default_number = 0,
        .default_string = "limited",
        .min = 0,
        .max = 0,
        .allowed = ranges,
        .max_count = 0,
    },
    variantSchema("the nv12_to_abgr kernel: auto (block8x2), block2x2 (one 2x2 block per work item), block8x2, "
                  "block16x2 (8 or 16 x 2 pixels per work item, aligned vector loads and stores); the other ops "
                  "ignore it", variants),
};

const char* const kernel_files[] = {"color.cl"};

Op opOf(const framecl_param_value* values)
{
    return Op(enumIndex(values[param_op], ops));
}

int refuseInput(const framecl_format* in, const char* expected, char* error, size_t error_size)
{
    char text[5];
    std::snprintf(error, error_size, "input must be %s, got %s", expected, formatName(in->fourcc, text));
    return 1;
}

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out,
              char* error, size_t error_size)
{
    switch (opOf(values)) {
    case abgr_to_y:
        if (in->fourcc != DRM_FORMAT_ABGR8888)
            return refuseInput(in, "ABGR8888", error, error_size);
        *out = {DRM_FORMAT_R8, in->width, in->height};
        return 0;
    case nv12_to_y:
        if (in->fourcc != DRM_FORMAT_NV12)
            return refuseInput(in, "NV12", error, error_size);
        *out = {DRM_FORMAT_R8, in->width, in->height};
        return 0;
    case nv12_to_abgr:
        if (in->fourcc != DRM_FORMAT_NV12)
            return refuseInput(in, "NV12", error, error_size);
        *out = {DRM_FORMAT_ABGR8888, in->width, in->height};
        return 0;
    case abgr_to_nv12:
        if (in->fourcc != DRM_FORMAT_ABGR8888)
            return refuseInput(in, "ABGR8888", error, error_size);
        if (in->width % 2 || in->height % 2) {
            std::snprintf(error, error_size, "abgr_to_nv12 needs an even width and height, got %ux%u", in->width,
                          in->height);
            return 1;
        }
        *out = {DRM_FORMAT_NV12, in->width, in->height};
        return 0;
    }
    std::snprintf(error, error_size, "unknown op");
    return 1;
}

// abgr_to_y(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height):
// one work item per pixel. Each row is independent, so the daemon may split the
// dispatch into bands of rows to bound its GPU time.
// Both luma ops write their R8 output as an image (abgr_to_y_image, nv12_to_y_image:
// the same arguments with one image for the three of the output plane) where the
// request asks for it: the next stage reads it as one.
void writeImageIfAsked(const framecl_plan_request* request, framecl_dispatch& dispatch, const char* image_kernel)
{
    if (!(request->output_image_planes & 1u))
        return;
    dispatch.kernel = image_kernel;
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_IMAGE, 0);
}

void planAbgrToY(const framecl_format* in, const framecl_plan_request* request, framecl_plan* plan)
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
    writeImageIfAsked(request, dispatch, "abgr_to_y_image");
    plan->dispatch_count = 1;
}

// nv12_to_y(y, y_offset, y_stride, dst, dst_offset, dst_stride, width, height): one
// work item per pixel of the Y plane (plane 0); the UV plane is not read.
void planNv12ToY(const framecl_format* in, const framecl_plan_request* request, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = "nv12_to_y";
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width;
    dispatch.global[1] = in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.arg_count = 4;
    writeImageIfAsked(request, dispatch, "nv12_to_y_image");
    plan->dispatch_count = 1;
}

// `auto` is block8x2, the fastest at the larger frame sizes on the GPU measured
// (docs/benchmarks.md, "Filters: framecl-bench"; docs/filters.md).
Variant variantOf(const framecl_param_value* values)
{
    const auto variant = Variant(enumIndex(values[param_variant], variants));
    return variant == variant_auto ? block8x2 : variant;
}

// nv12_to_abgr's constants: the conversion of docs/filters.md folded here, in double,
// into one affine map per channel, so the kernel does four multiply-adds per pixel:
//   Y' = (Y - y_offset) * y_scale
//   R = Y' + r_cr * (Cr - 128)
//   G = Y' - g_cb * (Cb - 128) - g_cr * (Cr - 128)
//   B = Y' + b_cb * (Cb - 128)
// with the chroma scale (255/224 for limited range) inside the four coefficients.
// Returned as the parameter block holds them: y_offset, y_scale, r_cr, g_cb, g_cr, b_cb.
std::array<float, 6> nv12ToAbgrMap(const framecl_param_value* values)
{
    const bool bt709_matrix = enumIndex(values[param_matrix], matrices) == bt709;
    const bool full_range = enumIndex(values[param_range], ranges) == full;
    const double kr = bt709_matrix ? 0.2126 : 0.299;
    const double kb = bt709_matrix ? 0.0722 : 0.114;
    const double kg = 1.0 - kr - kb;
    const double y_offset = full_range ? 0.0 : 16.0;
    const double y_scale = full_range ? 1.0 : 255.0 / 219.0;
    const double c_scale = full_range ? 1.0 : 255.0 / 224.0;
    const double r_cr = 2.0 * (1.0 - kr) * c_scale;
    const double b_cb = 2.0 * (1.0 - kb) * c_scale;
    return {float(y_offset), float(y_scale), float(r_cr), float(kb * b_cb / kg), float(kr * r_cr / kg), float(b_cb)};
}

// nv12_to_abgr(y plane, uv plane, dst, width, height, params): one work item per 2x2
// block, which shares one Cb, Cr pair, or per N/2 such blocks side by side
// (nv12_to_abgr_block<N>, variant block<N>x2); the constants are the parameter block's
// (nv12ToAbgrMap).
void planNv12ToAbgr(const framecl_format* in, const framecl_param_value* values, framecl_plan* plan)
{
    // 2x2 blocks per work item along a row.
    uint32_t blocks = 1;
    framecl_dispatch& dispatch = plan->dispatches[0];
    switch (variantOf(values)) {
    case variant_auto:
    case block2x2:
        dispatch.kernel = "nv12_to_abgr";
        break;
    case block8x2:
        dispatch.kernel = "nv12_to_abgr_block8";
        blocks = 4;
        break;
    case block16x2:
        dispatch.kernel = "nv12_to_abgr_block16";
        blocks = 8;
        break;
    }
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = (in->width / 2 + blocks - 1) / blocks;
    dispatch.global[1] = in->height / 2;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_INPUT_PLANE, 1);
    dispatch.args[2] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[3] = uintArg(in->width);
    dispatch.args[4] = uintArg(in->height);
    dispatch.args[5] = paramsArg();
    dispatch.arg_count = 6;
    plan->dispatch_count = 1;
}

// abgr_to_nv12's constants: the matrix and range of docs/filters.md folded here, in
// double, into integer weights in units of 2^-16: Y's of R, G, B with the range's scale,
// and Cb's and Cr's with the chroma scale (224/255 for limited range),
// Cb = (B - Y) / (2 (1 - Kb)), Cr = (R - Y) / (2 (1 - Kr)). Returned as the parameter
// block holds them: y_r, y_g, y_b, y_offset (a code: 16 or 0), u_r, u_g, u_b, v_r, v_g,
// v_b.
std::array<int32_t, 10> abgrToNv12Weights(const framecl_param_value* values)
{
    const bool bt709_matrix = enumIndex(values[param_matrix], matrices) == bt709;
    const bool full_range = enumIndex(values[param_range], ranges) == full;
    const double kr = bt709_matrix ? 0.2126 : 0.299;
    const double kb = bt709_matrix ? 0.0722 : 0.114;
    const double kg = 1.0 - kr - kb;
    const double y_scale = full_range ? 1.0 : 219.0 / 255.0;
    const double c_scale = full_range ? 1.0 : 224.0 / 255.0;
    const auto weight = [](double w) { return int32_t(std::lround(w * 65536.0)); };
    return {weight(kr * y_scale),
            weight(kg * y_scale),
            weight(kb * y_scale),
            full_range ? 0 : 16,
            weight(-kr / (2 * (1 - kb)) * c_scale),
            weight(-kg / (2 * (1 - kb)) * c_scale),
            weight(0.5 * c_scale),
            weight(0.5 * c_scale),
            weight(-kg / (2 * (1 - kr)) * c_scale),
            weight(-kb / (2 * (1 - kr)) * c_scale)};
}

// abgr_to_nv12(src plane, y plane, uv plane, width, height, params): one work item per
// 2x2 block; the weights are the parameter block's (abgrToNv12Weights).
void planAbgrToNv12(const framecl_format* in, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = "abgr_to_nv12";
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width / 2;
    dispatch.global[1] = in->height / 2;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 1);
    dispatch.args[3] = uintArg(in->width);
    dispatch.args[4] = uintArg(in->height);
    dispatch.args[5] = paramsArg();
    dispatch.arg_count = 6;
    plan->dispatch_count = 1;
}

// `in` is a format negotiate accepted, so only the op is left to choose.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request* request,
         framecl_plan* plan, char* error, size_t error_size)
{
    switch (opOf(values)) {
    case abgr_to_y:
        planAbgrToY(in, request, plan);
        return 0;
    case nv12_to_y:
        planNv12ToY(in, request, plan);
        return 0;
    case nv12_to_abgr:
        planNv12ToAbgr(in, values, plan);
        return 0;
    case abgr_to_nv12:
        planAbgrToNv12(in, plan);
        return 0;
    }
    std::snprintf(error, error_size, "unknown op");
    return 1;
}

// The parameter block: nv12_to_abgr's six floats (24 bytes), abgr_to_nv12's ten ints (40
// bytes), in the orders nv12ToAbgrMap and abgrToNv12Weights give; the luma ops have no
// constants and bind no block, but the daemon takes no empty one, so theirs is one zero
// uint (4 bytes). Each op's block keeps its size whatever `matrix` and `range` say.
int paramBlock(const framecl_format*, const framecl_param_value* values, uint8_t* block, uint32_t block_size,
               uint32_t* used, char* error, size_t error_size)
{
    *used = 0;
    switch (opOf(values)) {
    case abgr_to_y:
    case nv12_to_y: {
        const uint32_t none = 0;
        return appendToBlock(block, block_size, used, &none, 1) ? 0 : 1;
    }
    case nv12_to_abgr: {
        const auto map = nv12ToAbgrMap(values);
        return appendToBlock(block, block_size, used, map.data(), uint32_t(map.size())) ? 0 : 1;
    }
    case abgr_to_nv12: {
        const auto weights = abgrToNv12Weights(values);
        return appendToBlock(block, block_size, used, weights.data(), uint32_t(weights.size())) ? 0 : 1;
    }
    }
    std::snprintf(error, error_size, "unknown op");
    return 1;
}

// Every op is pointwise, whatever the variant: abgr_to_nv12 over 2x2 blocks (their pixels
// share one Cb, Cr pair), the others pixel by pixel.
int pointwise(const framecl_format*, const framecl_param_value* values, framecl_pointwise* pointwise, char*, size_t)
{
    const Op op = opOf(values);
    const uint32_t side = op == abgr_to_nv12 ? 2 : 1;
    *pointwise = {.function = pointwise_functions[op],
                  .kernel_file = 0,
                  .block_width = side,
                  .block_height = side,
                  .reads_input = 0,
                  .fused_loads = 0};
    return 0;
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
    .param_block = paramBlock,
    .pointwise = pointwise,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
