// The `meanshift` plugin: mean-shift filtering of an ABGR8888 frame, OpenCV's
// pyrMeanShiftFiltering with maxLevel = 0, as docs/filters.md specifies it; the
// kernels are in kernels/meanshift.cl.
//
//   sp        spatial radius: the window is (2 sp + 1)² pixels, clipped to the image
//   sr        colour radius: a pixel joins the mean when its squared RGB distance to the
//             current colour is at most cvRound(sr²)
//   max_iter  at most this many shifts per pixel
//   eps       a pixel stops when |dx| + |dy| + the colour's squared change <= eps
//   variant   baseline, packed or local (the mean-shift paper's steps), image (baseline
//             reading the frame as an image: guide §6.2), or auto
#include <cmath>
#include <cstdio>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// The values of `variant`, in the order of the Variant enum.
const char* const variants[] = {"auto", "baseline", "packed", "local", "image", nullptr};
enum Variant { variant_auto, baseline, packed, local, image };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_sp, param_sr, param_max_iter, param_eps, param_variant, param_count };

// √3 · 255 = 441.7 is the largest RGB distance: a colour radius of 442 takes every
// pixel of the window, and a larger one would change nothing.
constexpr double max_sr = 442;

// The left side of the stop test is at most 2 sp + 3 · 255² = 195139 (a shift moves at
// most sp along each axis, sp <= 32): an eps of that or more stops every pixel after its
// first shift.
constexpr double max_eps = 1e6;

// Sums of columns and rows over a window of at most 65² pixels stay below 2^31 in the
// kernels' int arithmetic while coordinates stay below 65536.
constexpr uint32_t max_side = 65536;

const framecl_param_schema params[param_count] = {
    {
        .name = "sp",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "spatial radius: each shift averages the (2 sp + 1)^2 pixels around the current "
                "position, clipped to the image",
        .default_number = 5,
        .default_string = nullptr,
        .min = 1,
        .max = 32,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "sr",
        .type = FRAMECL_PARAM_TYPE_FLOAT,
        .help = "colour radius: a window pixel joins the mean when the sum of its squared R, G, B "
                "differences to the current colour is at most round(sr^2); 442 takes every pixel",
        .default_number = 6,
        .default_string = nullptr,
        .min = 0,
        .max = max_sr,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "max_iter",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the most shifts per pixel (OpenCV's TermCriteria maxCount)",
        .default_number = 5,
        .default_string = nullptr,
        .min = 1,
        .max = 100,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "eps",
        .type = FRAMECL_PARAM_TYPE_FLOAT,
        .help = "a pixel stops shifting when |dx| + |dy| + the squared change of its colour is at "
                "most eps (OpenCV's TermCriteria epsilon)",
        .default_number = 1,
        .default_string = nullptr,
        .min = 0,
        .max = max_eps,
        .allowed = nullptr,
        .max_count = 0,
    },
    variantSchema("the kernel: baseline (byte loads), packed (32-bit loads, unrolled rows), local "
                  "(packed with the neighbourhood in local memory), image (baseline reading an image) or auto; all "
                  "give the same result", variants),
};

const char* const kernel_files[] = {"meanshift.cl"};

// auto is packed. The paper's packed 4-byte loads and unrolling were its fastest steps
// on both GPUs (§4.4); its local-memory tile was no faster than global reads (§4.3),
// and on current GPUs global reads are cached in the same on-chip memory, while the
// tile adds a test per window and a fallback that diverges within a warp.
Variant variantOf(const framecl_param_value* values)
{
    const auto variant = Variant(enumIndex(values[param_variant], variants));
    return variant == variant_auto ? packed : variant;
}

// The paper's work groups (§3.1, §4.1): 128 work items, 32 along a row so that a warp
// or wave reads whole rows, coalesced.
constexpr uint32_t group_width = 32;
constexpr uint32_t group_height = 4;

// The local variant's tile: the group's pixels and `margin` more on each side. A margin
// of sp keeps every first window in the tile; each further pixel of margin keeps a
// window that moved by that much. The margin grows up to 2 sp while the tile fits in
// 32 KiB, the local memory of the smallest GPUs framecl targets (Adreno).
constexpr uint32_t tile_budget_bytes = 32 * 1024;

uint32_t tileBytes(uint32_t margin)
{
    return (group_width + 2 * margin) * (group_height + 2 * margin) * 4;
}

uint32_t tileMargin(uint32_t sp)
{
    uint32_t margin = sp;
    while (margin < 2 * sp && tileBytes(margin + 1) <= tile_budget_bytes)
        ++margin;
    return margin;
}

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out,
              char* error, size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_ABGR8888) {
        char text[5];
        std::snprintf(error, error_size, "input must be ABGR8888, got %s",
                      formatName(in->fourcc, text));
        return 1;
    }
    if (in->width > max_side || in->height > max_side) {
        std::snprintf(error, error_size, "width and height must be at most %u, got %ux%u", max_side,
                      in->width, in->height);
        return 1;
    }
    *out = *in;
    return 0;
}

// OpenCV's isr2 = cvRound(sr * sr): round half to even, in double, as OpenCV computes it.
uint32_t colourRadius2(double sr)
{
    return uint32_t(std::nearbyint(sr * sr));
}

// The stop test compares a whole number with epsilon: L <= epsilon exactly when
// L <= floor(epsilon).
uint32_t stopBound(double eps)
{
    return uint32_t(std::floor(eps));
}

// meanshift_<variant>(src, src_offset, src_stride, dst, dst_offset, dst_stride, width,
// height, sp, sr2, max_iter, eps[, tile, margin, tile_capacity]; image: one src image
// for the first three): one work item per
// pixel. Each output pixel depends only on the input (its window clipped to the image),
// so the daemon may cut the dispatch along either axis: bands of rows, and columns
// within them where a band of one work group's rows is still over the budget.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*, framecl_plan* plan, char*,
         size_t)
{
    const Variant variant = variantOf(values);
    const auto sp = uint32_t(values[param_sp].int_value);
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = variant == baseline ? "meanshift_baseline"
                      : variant == packed ? "meanshift_packed"
                      : variant == image  ? "meanshift_image"
                                          : "meanshift_local";
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width;
    dispatch.global[1] = in->height;
    if (variant != baseline && variant != image) { // those leave the work-group size to the daemon
        dispatch.local_hint[0] = group_width;
        dispatch.local_hint[1] = group_height;
    }
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(variant == image ? FRAMECL_ARG_INPUT_IMAGE : FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.args[4] = uintArg(sp);
    dispatch.args[5] = uintArg(colourRadius2(values[param_sr].float_value));
    dispatch.args[6] = uintArg(uint32_t(values[param_max_iter].int_value));
    dispatch.args[7] = uintArg(stopBound(values[param_eps].float_value));
    dispatch.arg_count = 8;
    if (variant == local) {
        const uint32_t margin = tileMargin(sp);
        framecl_arg tile{};
        tile.kind = FRAMECL_ARG_LOCAL;
        tile.local_bytes = tileBytes(margin);
        dispatch.args[8] = tile;
        dispatch.args[9] = uintArg(margin);
        dispatch.args[10] = uintArg(tileBytes(margin) / 4);
        dispatch.arg_count = 11;
    }
    plan->dispatch_count = 1;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "meanshift",
    .version = PLUGIN_VERSION,
    .description = "mean-shift filtering of an ABGR8888 frame (OpenCV's pyrMeanShiftFiltering)",
    .param_count = param_count,
    .params = params,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
    .param_block = nullptr,
    .pointwise = nullptr,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
