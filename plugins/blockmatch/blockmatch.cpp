// The `blockmatch` plugin: motion vectors by block matching against the session's
// previous frame (guide §9.3.3), as docs/filters.md specifies them; the kernels are in
// kernels/blockmatch.cl.
//
// R8 in (a luma plane: NV12 goes through `color` first). ABGR8888 out, one pixel per
// block of `block` x `block`: (dx, dy, cost low byte, cost high byte). A stage sets
//   block      the blocks' side, 4 to 32
//   range      the search range, 1 to 32: dx and dy from -range to +range
//   metric     sad or ssd
//   border     the previous frame's pixels outside the image, with border_value
//   variant    global (one work item per block, from global memory), local (a work
//              group per block searching a window in local memory), packed (local,
//              8 candidates per item compared 4 pixels at a time with abs_diff on
//              uchar4), tiled (packed's work, the bytes unpacked into registers once
//              and reused by the 8 candidates), or auto (tiled)
//
// The plugin keeps state (include/framecl/plugin.h, framecl_state): the previous frame,
// and a word saying whether there is one. Each frame is two dispatches: the match, then
// blockmatch_keep, which copies the frame into the state for the next.
#include <cstdio>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

const char* const metrics[] = {"sad", "ssd", nullptr};

const char* const variants[] = {"auto", "global", "local", "packed", "tiled", nullptr};
enum Variant { variant_auto, global, local, packed, tiled };
// Each variant's kernel, in the order of `variants`; auto is tiled.
const char* const kernels[] = {"blockmatch_tiled", "blockmatch_global", "blockmatch_local", "blockmatch_packed",
                               "blockmatch_tiled"};

// The work-group variants' group (MATCH_GROUP in kernels/blockmatch.cl).
constexpr uint32_t match_group = 64;

enum Param { param_block, param_range, param_metric, param_border, param_border_value, param_variant, param_count };

const framecl_param_schema params[param_count] = {
    {
        .name = "block",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the blocks' side in pixels; blocks at the right and bottom edges hold what is left",
        .default_number = 8,
        .default_string = nullptr,
        .min = 4,
        .max = 32,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "range",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the search range in pixels: every dx and dy from -range to +range is tried",
        .default_number = 8,
        .default_string = nullptr,
        .min = 1,
        .max = 32,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "metric",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the cost of a candidate: sad (sum of absolute differences) or ssd (sum of squared differences)",
        .default_number = 0,
        .default_string = "sad",
        .min = 0,
        .max = 0,
        .allowed = metrics,
        .max_count = 0,
    },
    borderSchema(),
    borderValueSchema(),
    variantSchema("the kernel: global (one work item per block), local (a work group per block, the search "
                  "window in local memory), packed (local, 8 candidates per work item, 4 pixels at a time on "
                  "uchar4), tiled (packed's work with the bytes unpacked into registers) or auto",
                  variants),
};

const char* const kernel_files[] = {"blockmatch.cl"};

uint32_t blocksAcross(uint32_t pixels, uint32_t block)
{
    return (pixels + block - 1) / block;
}

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out, char* error,
              size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_R8) {
        char text[5];
        std::snprintf(error, error_size, "input must be R8 (a luma plane; NV12 through color first), got %s",
                      formatName(in->fourcc, text));
        return 1;
    }
    const auto block = uint32_t(values[param_block].int_value);
    *out = {DRM_FORMAT_ABGR8888, blocksAcross(in->width, block), blocksAcross(in->height, block)};
    return 0;
}

framecl_arg localArg(uint32_t bytes)
{
    framecl_arg arg{};
    arg.kind = FRAMECL_ARG_LOCAL;
    arg.local_bytes = bytes;
    return arg;
}

// Dispatch 0, blockmatch_<variant>(src, prev (state 0), flag (state 1), dst, width,
// height, block, range, metric, border, border_value[, current, window]); dispatch 1,
// blockmatch_keep(src, prev, flag, width, height). The match's rows of blocks are
// independent, so the daemon may cut it into bands; the copy into any tiles.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*,
         framecl_plan* plan, char*, size_t)
{
    const auto block = uint32_t(values[param_block].int_value);
    const auto range = uint32_t(values[param_range].int_value);
    const auto variant = Variant(enumIndex(values[param_variant], variants));
    plan->state_count = 2;
    plan->states[0].format = {DRM_FORMAT_R8, in->width, in->height};
    plan->states[1].format = {DRM_FORMAT_R8, 4, 1}; // one uint: 1 once state 0 holds a frame

    framecl_dispatch& match = plan->dispatches[0];
    match.kernel = kernels[variant];
    match.kernel_file = 0;
    match.dims = 2;
    match.global[0] = blocksAcross(in->width, block);
    match.global[1] = blocksAcross(in->height, block);
    match.tileable_axes = FRAMECL_AXIS_Y;
    match.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    match.args[1] = planeArg(FRAMECL_ARG_STATE, 0);
    match.args[2] = planeArg(FRAMECL_ARG_STATE, 1);
    match.args[3] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    match.args[4] = uintArg(in->width);
    match.args[5] = uintArg(in->height);
    match.args[6] = uintArg(block);
    match.args[7].kind = FRAMECL_ARG_INT;
    match.args[7].int_value = int32_t(range);
    match.args[8] = uintArg(enumIndex(values[param_metric], metrics));
    match.args[9] = uintArg(enumIndex(values[param_border], border_modes));
    match.args[10] = uintArg(uint32_t(values[param_border_value].int_value));
    match.arg_count = 11;
    if (variant != global) {
        // packed and tiled pad the block's rows to whole words and the window to
        // word-aligned runs of 8 candidates (kernels/blockmatch.cl, WordWindow).
        const uint32_t words = (block + 3) / 4;
        const uint32_t pad = 7 + (4 - 2 * range % 4) % 4;
        const uint32_t window_width = variant == local ? block + 2 * range : 2 * range + pad - 7 + 4 * words + 8;
        match.global[0] *= match_group;
        match.local_hint[0] = match_group;
        match.local_hint[1] = 1;
        match.args[11] = localArg(variant == local ? block * block : 4 * words * block);
        match.args[12] = localArg(window_width * (block + 2 * range));
        match.arg_count = 13;
    }

    framecl_dispatch& keep = plan->dispatches[1];
    keep.kernel = "blockmatch_keep";
    keep.kernel_file = 0;
    keep.dims = 2;
    keep.global[0] = in->width;
    keep.global[1] = in->height;
    keep.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    keep.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    keep.args[1] = planeArg(FRAMECL_ARG_STATE, 0);
    keep.args[2] = planeArg(FRAMECL_ARG_STATE, 1);
    keep.args[3] = uintArg(in->width);
    keep.args[4] = uintArg(in->height);
    keep.arg_count = 5;
    plan->dispatch_count = 2;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "blockmatch",
    .version = PLUGIN_VERSION,
    .description = "Motion vectors of an R8 plane's blocks against the previous frame, by SAD or SSD",
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
