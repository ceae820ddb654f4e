// The `epsilon` plugin: the epsilon filter of guide §10.3 on an R8 plane, as
// docs/filters.md specifies it; the kernels are in kernels/epsilon.cl.
//
// Each output pixel is the rounded mean of the pixels of its (2 radius + 1)^2 window
// that lie within `threshold` of the centre. `variant` chooses among the guide's
// optimisation steps:
//   baseline    one pixel per work item, each window pixel loaded (§10.3.1)
//   packed      four pixels per work item, each window row loaded once (§10.3.2, §10.3.3)
//   branchless  packed without selections (§10.3.6)
//   half        branchless in half precision where the device has cl_khr_fp16
//   wide16      16 pixels of a row per work item, each window row loaded as aligned 8-byte
//               words where the offset and stride allow; the threshold test by saturation
//   wide16x2    wide16 for 16x2 pixels, the two rows sharing their window rows
//   image       one pixel per work item, the window read from an image (guide §6.2); it
//               writes its output as an image too where the next stage reads one
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// The values of `variant`, in the order of the Variant enum.
const char* const variants[] = {"auto",   "baseline", "packed",   "branchless",
                                "half",   "wide16",   "wide16x2", "image", nullptr};
enum Variant { variant_auto, baseline, packed, branchless, half, wide16, wide16x2, image };

// The kernels of packed, branchless, half, wide16 and wide16x2 (in Variant order), one per
// radius:
// kernels/epsilon.cl says why.
#define RADIUS_KERNELS(name)                                                              \
    {                                                                                     \
        "epsilon_" name "_r1", "epsilon_" name "_r2", "epsilon_" name "_r3",              \
        "epsilon_" name "_r4", "epsilon_" name "_r5", "epsilon_" name "_r6",              \
        "epsilon_" name "_r7",                                                            \
    }
const char* const radius_kernels[][7] = {
    RADIUS_KERNELS("packed"),
    RADIUS_KERNELS("branchless"),
    RADIUS_KERNELS("half"),
    RADIUS_KERNELS("wide16"),
    RADIUS_KERNELS("wide16x2"),
};

// Output pixels of a row, and rows, per work item of packed, branchless, half, wide16 and
// wide16x2.
const uint32_t pixels_per_item[] = {4, 4, 4, 16, 16};
const uint32_t rows_per_item[] = {1, 1, 1, 1, 2};

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param {
    param_radius,
    param_threshold,
    param_border,
    param_border_value,
    param_variant,
    param_count
};

const framecl_param_schema params[param_count] = {
    {
        .name = "radius",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "half the window's side: the window is (2 radius + 1) pixels square, 9x9 at 4",
        .default_number = 4,
        .default_string = nullptr,
        .min = 1,
        .max = 7,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "threshold",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the largest difference from the centre of a pixel that joins the mean",
        .default_number = 20,
        .default_string = nullptr,
        .min = 0,
        .max = 255,
        .allowed = nullptr,
        .max_count = 0,
    },
    borderSchema(),
    borderValueSchema(),
    variantSchema("the kernel: auto (wide16x2), baseline, packed, branchless, half, wide16, wide16x2, image", variants),
};

const char* const kernel_files[] = {"epsilon.cl"};

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out,
              char* error, size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_R8) {
        char text[5];
        std::snprintf(error, error_size, "input must be R8, got %s", formatName(in->fourcc, text));
        return 1;
    }
    *out = {DRM_FORMAT_R8, in->width, in->height};
    return 0;
}

// `auto` is wide16x2, the fastest variant at the larger frame sizes on the GPU measured
// (docs/benchmarks.md, "Filters: framecl-bench"; docs/filters.md, epsilon's variants).
// The guide measures its steps on Adreno 430 (Table 10-3) as packed 3.4x and packed
// without branches 5.4x the baseline; on the H100 they keep that order.
Variant variantOf(const framecl_param_value* values)
{
    const auto variant = Variant(enumIndex(values[param_variant], variants));
    return variant == variant_auto ? wide16x2 : variant;
}

// epsilon_baseline(src, src_offset, src_stride, dst, dst_offset, dst_stride, width,
// height, radius, threshold, border, border_value), one work item per pixel; or
// epsilon_<variant>_r<radius>(the same but radius), one work item per four pixels of a
// row (packed, branchless, half), 16 (wide16) or 16x2 (wide16x2). Every work item finds
// its pixels from get_global_id() and only reads the input, so the daemon may tile either
// axis. local_hint stays 0 for the guide's variants: guide §6.1.5.3 warns that a
// work-group size tuned for one GPU is poor on another; choosing one per device is the
// daemon's part (§6.1.5). The wide variants ask for 8x16: the driver's own choice for
// 204 work items a row (3264 / 16) was far slower, and no shape the tuner tries did
// better (docs/benchmarks.md, "Choices inside the kernels").
// epsilon_image(src image, dst, ...) takes baseline's arguments with an image for the
// input, and epsilon_image_to_image one for the output too, where the request asks.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request* request,
         framecl_plan* plan, char*, size_t)
{
    const Variant variant = variantOf(values);
    const bool output_image = variant == image && (request->output_image_planes & 1u);
    const auto radius = uint32_t(values[param_radius].int_value);
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[1] = in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    uint32_t arg = 0;
    dispatch.args[arg++] = planeArg(variant == image ? FRAMECL_ARG_INPUT_IMAGE : FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[arg++] = planeArg(output_image ? FRAMECL_ARG_OUTPUT_IMAGE : FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[arg++] = uintArg(in->width);
    dispatch.args[arg++] = uintArg(in->height);
    if (variant == baseline || variant == image) {
        dispatch.kernel = variant == baseline ? "epsilon_baseline"
                          : output_image      ? "epsilon_image_to_image"
                                              : "epsilon_image";
        dispatch.global[0] = in->width;
        dispatch.args[arg++] = uintArg(radius);
    } else {
        dispatch.kernel = radius_kernels[variant - packed][radius - 1];
        const uint32_t pixels = pixels_per_item[variant - packed];
        dispatch.global[0] = (in->width + pixels - 1) / pixels;
        const uint32_t rows = rows_per_item[variant - packed];
        dispatch.global[1] = (in->height + rows - 1) / rows;
    }
    dispatch.args[arg++] = uintArg(uint32_t(values[param_threshold].int_value));
    dispatch.args[arg++] = uintArg(uint32_t(enumIndex(values[param_border], border_modes)));
    dispatch.args[arg++] = uintArg(uint32_t(values[param_border_value].int_value));
    dispatch.arg_count = arg;
    if (variant == wide16 || variant == wide16x2) {
        // Measured: work groups of 8x16 (tiles of 128x16 or 128x32 pixels) beat every
        // shape the tuner tries (docs/filters.md).
        dispatch.local_hint[0] = 8;
        dispatch.local_hint[1] = 16;
    }
    plan->dispatch_count = 1;
    return 0;
}

// baseline and the wide variants read each input pixel through EPSILON_PIXEL
// (kernels/epsilon.cl), so pointwise stages before the stage may fuse into their loads;
// the packed ones keep their own vector loads, and image reads an image.
int pointwise(const framecl_format*, const framecl_param_value* values, framecl_pointwise* pointwise, char*,
              size_t)
{
    const Variant variant = variantOf(values);
    if (variant == baseline || variant == wide16 || variant == wide16x2)
        pointwise->fused_loads = 1;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "epsilon",
    .version = PLUGIN_VERSION,
    .description = "Epsilon filter: the mean of the window pixels near the centre's value",
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
