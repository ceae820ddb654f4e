// The `bicubic` plugin: bicubic scaling of an R8 or ABGR8888 frame (guide §9.3.4), as
// docs/filters.md specifies it; the kernels are in kernels/bicubic.cl.
//
// R8 or ABGR8888 in, the same format out at `width` x `height`. A stage sets the
// output size (0 on an axis: from the input, see sizeOf), Keys' coefficient `a`, the
// `border` rule with its `border_value`, and the `variant`:
//   pixel  one output pixel per work item, 16 taps loaded one by one: the baseline
//   strip  8 output rows per work item, 4 columns for R8 and 1 for ABGR8888; each
//          input row's horizontal pass computed once for the strip, taps loaded as one
//          vector (guide §10.2.2, §10.4.1, §10.4.3)
//   image  pixel with the taps read from an image (guide §6.2)
//   auto   strip: a quarter (upscaling by 1.5) to a half (downscaling by 2) of the
//          taps, never more than pixel, in far fewer load instructions and with less
//          than half the multiply-adds (kernels/bicubic.cl's header counts them);
//          the faster on PoCL, and where a GPU prefers pixel the tuner chooses it
//          (docs/filters.md)
// The kernels compute in float: within ±1 of the reference, equal to it at t = 0.
// pixel and strip take the pointwise stages before them into their loads (pointwise(),
// below), so camera-prep's NV12 to RGB runs inside the scaler.
#include <algorithm>
#include <cstdio>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

const char* const variants[] = {"auto", "pixel", "strip", "image", nullptr};
enum Variant { variant_auto, pixel, strip, image };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param {
    param_width,
    param_height,
    param_a,
    param_border,
    param_border_value,
    param_variant,
    param_count
};

// The largest output side. The kernels compute tap positions in 32-bit integers,
// (2 X + 1) in + out < 2^32 (kernels/bicubic.cl, tapsOf), which these bounds keep.
constexpr uint32_t max_output_side = 16384;
constexpr uint32_t max_input_side = 65536;

const framecl_param_schema params[param_count] = {
    {
        .name = "width",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the output's width in pixels; 0: the input's width scaled as the height is (the "
                "input's "
                "width when height is 0 too)",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = max_output_side,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "height",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the output's height in pixels; 0: the input's height scaled as the width is (the "
                "input's "
                "height when width is 0 too)",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = max_output_side,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "a",
        .type = FRAMECL_PARAM_TYPE_FLOAT,
        .help = "the coefficient of Keys' cubic: -0.5 (the guide's, Catmull-Rom) or -0.75 "
                "(OpenCV's INTER_CUBIC); "
                "more negative sharpens",
        .default_number = -0.5,
        .default_string = nullptr,
        .min = -1,
        .max = 0,
        .allowed = nullptr,
        .max_count = 0,
    },
    borderSchema(),
    borderValueSchema(),
    variantSchema("the kernel: pixel (one output per work item), strip (8 rows of 4 R8 or 1 ABGR8888 "
                  "outputs per work item, row passes shared), image (pixel, reading an image) or auto", variants),
};

const char* const kernel_files[] = {"bicubic.cl"};

// Rows of a strip work item: STRIP_ROWS in kernels/bicubic.cl.
constexpr uint32_t strip_rows = 8;

// The output size for an input of `in_width` x `in_height`. Both 0: the input's size.
// One 0: that side keeps the input's aspect ratio, rounded to nearest (halves up), at
// least 1 (a user who sets only `width = 1920` expects the picture not to stretch).
// Returns false, with a message, when that side would pass max_output_side.
bool sizeOf(uint32_t in_width, uint32_t in_height, const framecl_param_value* values,
            uint32_t& width, uint32_t& height, char* error, size_t error_size)
{
    width = uint32_t(values[param_width].int_value);
    height = uint32_t(values[param_height].int_value);
    if (width == 0 && height == 0) {
        width = in_width;
        height = in_height;
    } else if (width == 0 || height == 0) {
        const bool derive_width = width == 0;
        const uint64_t given = derive_width ? height : width;
        const uint64_t scaled_side = derive_width ? in_width : in_height;
        const uint64_t other_side = derive_width ? in_height : in_width;
        const uint64_t derived =
            std::max<uint64_t>(1, (2 * scaled_side * given + other_side) / (2 * other_side));
        if (derived > max_output_side) {
            std::snprintf(error, error_size, "%s %llu (from the input's %ux%u) is above %u",
                          derive_width ? "width" : "height",
                          static_cast<unsigned long long>(derived), in_width, in_height,
                          max_output_side);
            return false;
        }
        (derive_width ? width : height) = uint32_t(derived);
    }
    if (width > max_output_side || height > max_output_side) {
        std::snprintf(error, error_size, "output %ux%u (the input's size) is above %u on a side",
                      width, height, max_output_side);
        return false;
    }
    return true;
}

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out,
              char* error, size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_R8 && in->fourcc != DRM_FORMAT_ABGR8888) {
        char text[5];
        std::snprintf(error, error_size, "input must be R8 or ABGR8888, got %s",
                      formatName(in->fourcc, text));
        return 1;
    }
    if (in->width > max_input_side || in->height > max_input_side) {
        std::snprintf(error, error_size, "input %ux%u is above %u on a side", in->width, in->height,
                      max_input_side);
        return 1;
    }
    uint32_t width = 0, height = 0;
    if (!sizeOf(in->width, in->height, values, width, height, error, error_size)) return 1;
    *out = {in->fourcc, width, height};
    return 0;
}

// A variant's kernels and the outputs each of its work items writes.
struct Kernel {
    const char* r8;
    const char* abgr;
    uint32_t r8_columns;   // output columns per work item, R8
    uint32_t abgr_columns; // output columns per work item, ABGR8888
    uint32_t rows;
};
const Kernel pixel_kernel = {"bicubic_pixel_r8", "bicubic_pixel_abgr", 1, 1, 1};
const Kernel strip_kernel = {"bicubic_strip_r8", "bicubic_strip_abgr", 4, 1, strip_rows};
const Kernel image_kernel = {"bicubic_image_r8", "bicubic_image_abgr", 1, 1, 1}; // the input as an image

// In the order of `variants`; auto is strip (the header says why).
const Kernel* const kernels[] = {&strip_kernel, &pixel_kernel, &strip_kernel, &image_kernel};

// bicubic_<variant>_{r8,abgr}(src, src_offset, src_stride, dst, dst_offset, dst_stride,
// in_width, in_height, out_width, out_height, a, border, border_value): one work item
// per output pixel or per strip. No work item reads what another writes, and each
// output row depends only on the input, so the daemon may split the dispatch into
// bands of rows.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*, framecl_plan* plan,
         char* error, size_t error_size)
{
    uint32_t width = 0, height = 0;
    if (!sizeOf(in->width, in->height, values, width, height, error, error_size)) return 1;
    const bool abgr = in->fourcc == DRM_FORMAT_ABGR8888;
    const Kernel& kernel = *kernels[enumIndex(values[param_variant], variants)];
    const uint32_t columns = abgr ? kernel.abgr_columns : kernel.r8_columns;

    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = abgr ? kernel.abgr : kernel.r8;
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = (width + columns - 1) / columns;
    dispatch.global[1] = (height + kernel.rows - 1) / kernel.rows;
    dispatch.tileable_axes = FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(&kernel == &image_kernel ? FRAMECL_ARG_INPUT_IMAGE : FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.args[4] = uintArg(width);
    dispatch.args[5] = uintArg(height);
    dispatch.args[6] = framecl_arg{};
    dispatch.args[6].kind = FRAMECL_ARG_FLOAT;
    dispatch.args[6].float_value = float(values[param_a].float_value);
    dispatch.args[7] = uintArg(enumIndex(values[param_border], border_modes));
    dispatch.args[8] = uintArg(uint32_t(values[param_border_value].int_value));
    dispatch.arg_count = 9;
    plan->dispatch_count = 1;
    return 0;
}

// pixel and strip read each input pixel through inputR8 or inputAbgr (kernels/bicubic.cl),
// so pointwise stages before the stage may fuse into their loads, computed on each tap;
// image reads an image.
int pointwise(const framecl_format*, const framecl_param_value* values, framecl_pointwise* pointwise, char*,
              size_t)
{
    if (kernels[enumIndex(values[param_variant], variants)] != &image_kernel)
        pointwise->fused_loads = 1;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "bicubic",
    .version = PLUGIN_VERSION,
    .description = "Bicubic scaling of R8 or ABGR8888 (Keys' cubic, coefficient a)",
    .param_count = param_count,
    .params = params,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
    .param_block = nullptr,
    .pointwise = pointwise,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
