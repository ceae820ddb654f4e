// The `box` plugin: the normalised box filter (OpenCV's `blur`), as docs/filters.md
// specifies it; the kernels are in kernels/box.cl.
//
// R8 or ABGR8888 in, the same format out. A stage sets the box's `width` and `height`
// (1 to 63), the `border` rule with its `border_value`, and the `variant`:
//   direct     one pass, the whole window summed per output pixel (guide §10.2.1's
//              baseline): width x height reads per pixel
//   separable  two passes through an R16 intermediate of horizontal window sums
//              (guide §10.2.1, splitting the box into passes): width + height reads
//   rows16     R8: one pass, 16x4 outputs per work item from 16-byte loads (aligned
//              uint4 where offsets and strides allow), column sums sliding down the
//              block; boxes at most 3 wide take the vector path. ABGR8888: separable
//   running    R8: one pass, running sums in both directions (vertical in registers,
//              horizontal through local memory), so a pixel costs the same whatever
//              the box's size. ABGR8888: separable
//   sweep      R8: running's sums in wider work groups whose loads are issued a block
//              of rows at a time (faster on a GPU, slower on a CPU: docs/benchmarks.md,
//              "How sweep is built, and why").
//              ABGR8888: separable
//   image      separable, with the input read as an image (guide §6.2) and, on R8, the
//              horizontal sums kept in an image too
//   auto       R8: rows16 for a box at most 3 wide, running otherwise. ABGR8888:
//              separable, unless the box is one pixel wide or high: then it is
//              one-dimensional already and direct reads as little in one pass
// Every variant sums exact integers, so all give the same result.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

const char* const variants[] = {"auto", "direct", "separable", "rows16", "running", "sweep", "image", nullptr};
enum Variant { variant_auto, direct, separable, rows16, running, sweep, image };

// rows16's work item: 16 outputs wide, 4 high (box_rows16_r8 in kernels/box.cl).
constexpr uint32_t rows16_outputs_x = 16;
constexpr uint32_t rows16_outputs_y = 4;

// running's work group: 64 items owning 256 output columns (RUNNING_ITEMS and
// RUNNING_COLUMNS in kernels/box.cl), walking down a band of rows, a multiple of
// RUNNING_ROWS (8). Each band first sums its first row's whole window, so a taller band
// spends less on that, and a shorter one gives more groups to fill the GPU: bands of
// 64 rows, halved down to 16 while the frame has fewer than running_groups groups
// (docs/benchmarks.md, "Choices inside the kernels").
constexpr uint32_t running_items = 64;
constexpr uint32_t running_columns = 256;
constexpr uint32_t running_groups = 2048;

uint32_t runningBandRows(const framecl_format* in)
{
    const uint32_t across = (in->width + running_columns - 1) / running_columns;
    uint32_t band = 64;
    while (band > 16 && across * ((in->height + band - 1) / band) < running_groups)
        band /= 2;
    return band;
}

// sweep's work group: 128 items keeping the sums of 512 columns (SWEEP_ITEMS and
// SWEEP_SUMS in kernels/box.cl) and 8 rows per pass. Its outputs are the sums' columns
// less the box's width and its left half's rounding up to 4, rounded down to a
// multiple of 32 so that each of the 16 items sharing a row takes an even number:
// 480 for boxes up to 33 wide, 448 up to 63 (the kernel's horizontal phase is written
// out for those two, so a 1x1 box, which would fit 512, takes 480 too). Each band first
// loads its first row's whole window: bands of 32 rows, 8 rows shorter at a time down to
// 8 while the frame has fewer than sweep_groups groups: more groups hide more of each
// one's waiting (docs/benchmarks.md, "Box sweep: scripts/device-sweep", the H200 table).
constexpr uint32_t sweep_items = 128;
constexpr uint32_t sweep_sums = 512;
constexpr uint32_t sweep_groups = 512;

uint32_t sweepTileColumns(uint32_t box_width)
{
    const uint32_t left4 = (box_width / 2 + 3) / 4 * 4, right = (box_width - 1) / 2;
    return std::min<uint32_t>(480, (sweep_sums - left4 - right) / 32 * 32);
}

uint32_t sweepBandRows(const framecl_format* in, uint32_t tile_columns)
{
    const uint32_t across = (in->width + tile_columns - 1) / tile_columns;
    uint32_t band = 32;
    while (band > 8 && across * ((in->height + band - 1) / band) < sweep_groups)
        band -= 8;
    return band;
}

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_width, param_height, param_border, param_border_value, param_variant, param_count };

const framecl_param_schema params[param_count] = {
    {
        .name = "width",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the box's width in pixels; the window covers x - width/2 to x + (width-1)/2",
        .default_number = 3,
        .default_string = nullptr,
        .min = 1,
        .max = 63,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "height",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the box's height in pixels; the window covers y - height/2 to y + (height-1)/2",
        .default_number = 3,
        .default_string = nullptr,
        .min = 1,
        .max = 63,
        .allowed = nullptr,
        .max_count = 0,
    },
    borderSchema(),
    borderValueSchema(),
    variantSchema("the kernels: direct (one pass), separable (horizontal sums, then vertical), rows16 "
                  "(R8: one pass, 16x4 outputs per work item, 16-byte loads), running (R8: one pass, running "
                  "sums whatever the box's size), sweep (R8: running sums, loads issued a block of rows at a "
                  "time), image (separable, reading through images), or auto", variants),
};

const char* const kernel_files[] = {"box.cl"};

// The variant a stage runs on `in`: `auto` resolved as the header says, and rows16,
// running and sweep on ABGR8888 (they have R8 kernels only) resolved to separable. On
// R8, rows16 is auto's choice for a box at most 3 wide (one pass, each input row loaded
// 16 bytes at a time) and running for wider ones (its cost does not grow with the box),
// whereas separable's byte loads and R16 intermediate keep it far from the copy
// bandwidth on a GPU (docs/benchmarks.md, "Filters: framecl-bench"). sweep, faster than
// running on a GPU but slower on a CPU through PoCL (framecl's default device), is left
// to the tuner (docs/benchmarks.md, "How sweep is built, and why").
Variant variantOf(const framecl_format* in, const framecl_param_value* values)
{
    const bool r8 = in->fourcc == DRM_FORMAT_R8;
    const Variant variant = Variant(enumIndex(values[param_variant], variants));
    if (variant == rows16 || variant == running || variant == sweep)
        return r8 ? variant : separable;
    if (variant != variant_auto)
        return variant;
    if (r8)
        return values[param_width].int_value <= 3 ? rows16 : running;
    return values[param_width].int_value == 1 || values[param_height].int_value == 1 ? direct : separable;
}

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out, char* error,
              size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_R8 && in->fourcc != DRM_FORMAT_ABGR8888) {
        char text[5];
        std::snprintf(error, error_size, "input must be R8 or ABGR8888, got %s", formatName(in->fourcc, text));
        return 1;
    }
    *out = *in;
    return 0;
}

// One work item per output pixel; no work item reads what another of the same dispatch
// writes, so the daemon may tile every dispatch along both axes.
void startDispatch(framecl_dispatch& dispatch, const char* kernel, const framecl_format* in)
{
    dispatch.kernel = kernel;
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width;
    dispatch.global[1] = in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
}

// The arguments every one-pass kernel starts with: (src, dst, width, height, box_width,
// box_height, border, border_value), eight in all.
void bindOnePassArgs(framecl_dispatch& dispatch, const framecl_format* in, const framecl_param_value* values)
{
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.args[4] = uintArg(uint32_t(values[param_width].int_value));
    dispatch.args[5] = uintArg(uint32_t(values[param_height].int_value));
    dispatch.args[6] = uintArg(enumIndex(values[param_border], border_modes));
    dispatch.args[7] = uintArg(uint32_t(values[param_border_value].int_value));
}

// box_direct_{r8,abgr}(src, dst, width, height, box_width, box_height, border,
// border_value)
void planDirect(const framecl_format* in, const framecl_param_value* values, bool abgr, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    startDispatch(dispatch, abgr ? "box_direct_abgr" : "box_direct_r8", in);
    bindOnePassArgs(dispatch, in, values);
    dispatch.arg_count = 8;
    plan->dispatch_count = 1;
}

// box_rows_{r8,abgr}(src, sums, width, height, box_width, border, border_value), then
// box_columns_{r8,abgr}(sums, dst, width, height, box_width, box_height, border,
// border_value). The intermediate holds each pixel's horizontal window sum per
// channel, at most 63 x 255 = 16065: one R16 element per channel, so an ABGR8888 frame
// of width w takes an R16 intermediate of width 4w. The sums are exact, so the second
// pass gives the direct variant's result.
void planSeparable(const framecl_format* in, const framecl_param_value* values, bool abgr, framecl_plan* plan)
{
    plan->intermediates[0].format = {DRM_FORMAT_R16, (abgr ? 4u : 1u) * in->width, in->height};
    plan->intermediate_count = 1;

    framecl_dispatch& rows = plan->dispatches[0];
    startDispatch(rows, abgr ? "box_rows_abgr" : "box_rows_r8", in);
    rows.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    rows.args[1] = planeArg(FRAMECL_ARG_INTERMEDIATE, 0);
    rows.args[2] = uintArg(in->width);
    rows.args[3] = uintArg(in->height);
    rows.args[4] = uintArg(uint32_t(values[param_width].int_value));
    rows.args[5] = uintArg(enumIndex(values[param_border], border_modes));
    rows.args[6] = uintArg(uint32_t(values[param_border_value].int_value));
    rows.arg_count = 7;

    framecl_dispatch& columns = plan->dispatches[1];
    startDispatch(columns, abgr ? "box_columns_abgr" : "box_columns_r8", in);
    columns.args[0] = planeArg(FRAMECL_ARG_INTERMEDIATE, 0);
    columns.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    columns.args[2] = uintArg(in->width);
    columns.args[3] = uintArg(in->height);
    columns.args[4] = uintArg(uint32_t(values[param_width].int_value));
    columns.args[5] = uintArg(uint32_t(values[param_height].int_value));
    columns.args[6] = uintArg(enumIndex(values[param_border], border_modes));
    columns.args[7] = uintArg(uint32_t(values[param_border_value].int_value));
    columns.arg_count = 8;
    plan->dispatch_count = 2;
}

// box_rows_image_{r8,abgr}(src image, sums, width, height, box_width, border,
// border_value), then box_columns_image_r8(sums image, dst, width, height, box_width,
// box_height, border, border_value) or box_columns_abgr as separable. On R8 the R16
// intermediate is an image: the first pass writes it, the second reads it.
void planImage(const framecl_format* in, const framecl_param_value* values, bool abgr, framecl_plan* plan)
{
    planSeparable(in, values, abgr, plan);
    framecl_dispatch& rows = plan->dispatches[0];
    rows.kernel = abgr ? "box_rows_image_abgr" : "box_rows_image_r8";
    rows.args[0] = planeArg(FRAMECL_ARG_INPUT_IMAGE, 0);
    if (abgr)
        return;
    rows.args[1] = planeArg(FRAMECL_ARG_INTERMEDIATE_IMAGE, 0);
    framecl_dispatch& columns = plan->dispatches[1];
    columns.kernel = "box_columns_image_r8";
    columns.args[0] = planeArg(FRAMECL_ARG_INTERMEDIATE_IMAGE, 0);
}

// box_rows16_r8(src, dst, width, height, box_width, box_height, border, border_value):
// one work item per 16x4 outputs; each reads only the input, so the dispatch is tileable
// along X and Y too.
void planRows16(const framecl_format* in, const framecl_param_value* values, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    startDispatch(dispatch, "box_rows16_r8", in);
    dispatch.global[0] = (in->width + rows16_outputs_x - 1) / rows16_outputs_x;
    dispatch.global[1] = (in->height + rows16_outputs_y - 1) / rows16_outputs_y;
    bindOnePassArgs(dispatch, in, values);
    dispatch.arg_count = 8;
    plan->dispatch_count = 1;
}

// box_running_r8(src, dst, width, height, box_width, box_height, border, border_value,
// band_rows): work groups of 64 x 1 items, each owning 256 columns and a band of rows;
// the kernel requires that size. Groups read only the input, so the daemon may tile the
// dispatch along both axes, at work-group boundaries.
void planRunning(const framecl_format* in, const framecl_param_value* values, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    startDispatch(dispatch, "box_running_r8", in);
    dispatch.global[0] = (in->width + running_columns - 1) / running_columns * running_items;
    const uint32_t band = runningBandRows(in);
    dispatch.global[1] = (in->height + band - 1) / band;
    dispatch.local_hint[0] = running_items;
    dispatch.local_hint[1] = 1;
    bindOnePassArgs(dispatch, in, values);
    dispatch.args[8] = uintArg(band);
    dispatch.arg_count = 9;
    plan->dispatch_count = 1;
}

// box_sweep_r8(src, dst, width, height, box_width, box_height, border, border_value,
// band_rows, tile_columns): work groups of 128 x 1 items, each owning tile_columns
// columns and a band of rows; the kernel requires that size. Groups read only the
// input, so the daemon may tile the dispatch along both axes, at work-group boundaries.
void planSweep(const framecl_format* in, const framecl_param_value* values, framecl_plan* plan)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    startDispatch(dispatch, "box_sweep_r8", in);
    const uint32_t tile = sweepTileColumns(uint32_t(values[param_width].int_value));
    const uint32_t band = sweepBandRows(in, tile);
    dispatch.global[0] = (in->width + tile - 1) / tile * sweep_items;
    dispatch.global[1] = (in->height + band - 1) / band;
    dispatch.local_hint[0] = sweep_items;
    dispatch.local_hint[1] = 1;
    bindOnePassArgs(dispatch, in, values);
    dispatch.args[8] = uintArg(band);
    dispatch.args[9] = uintArg(tile);
    dispatch.arg_count = 10;
    plan->dispatch_count = 1;
}

// `in` is a format negotiate accepted: R8 or ABGR8888.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*,
         framecl_plan* plan, char*, size_t)
{
    const bool abgr = in->fourcc == DRM_FORMAT_ABGR8888;
    switch (variantOf(in, values)) {
    case rows16:
        planRows16(in, values, plan);
        break;
    case running:
        planRunning(in, values, plan);
        break;
    case sweep:
        planSweep(in, values, plan);
        break;
    case direct:
        planDirect(in, values, abgr, plan);
        break;
    case image:
        planImage(in, values, abgr, plan);
        break;
    case variant_auto: // resolved by variantOf
    case separable:
        planSeparable(in, values, abgr, plan);
        break;
    }
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "box",
    .version = PLUGIN_VERSION,
    .description = "Normalised box filter (OpenCV's blur)",
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
