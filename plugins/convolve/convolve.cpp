// The `convolve` plugin: correlation of an R8 plane with a kernel of up to 9x9 weights
// (OpenCV's filter2D) or a separable pair of up to 9 taps each (sepFilter2D), with
// `scale` and `delta`, rounded and saturated, as docs/filters.md specifies it; the
// kernels are in kernels/convolve.cl.
//
// A stage gives exactly one kernel:
//   kernel, kernel_width, kernel_height   a 2D kernel, row-major
//   kernel_x, kernel_y                    a separable pair: horizontal and vertical taps
// and `scale`, `delta`, `border` with its `border_value`, and the `variant`:
//   direct     one pass, the whole window per output pixel (a pair as its outer product)
//   separable  a pair only: a horizontal pass into a float intermediate, then a vertical
//              pass (guide §9.3.1): kernel_width + kernel_height multiply-adds per pixel
//   separable8 separable with 8 outputs of a row per work item in both passes, vector
//              loads and stores (guide §10.3.3, §10.2.2)
//   row8       one pass, 8 outputs of a row per work item, each window row loaded once
//              with a vload16 (guide §10.3.3); a pair as its outer product
//   image      direct with the window read from an image (guide §6.2; a pair as its
//              outer product)
//   block      one pass, 8 x 4 outputs per work item, the kernel's width compiled in (taps
//              unrolled, the block's pixels and sums in registers), each input row loaded
//              once for the 4 output rows; a pair as its outer product
//   sepblock   a pair only: separable in one pass, 8 x 8 outputs per work item, the
//              horizontal sums of the block's rows kept in registers, not in an
//              intermediate; the width compiled in as block's
//   auto       see variantOf
// The weights travel in a plan constant (FRAMECL_ARG_CONSTANT): 81 of them do not fit in
// a dispatch's 24 arguments. `scale` is folded into them here, in double.
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

constexpr uint32_t max_taps = 9; // per side: kernels up to 9x9

const char* const variants[] = {"auto", "direct", "separable", "separable8", "row8", "image", "block", "sepblock",
                                nullptr};
enum Variant { variant_auto, direct, separable, separable8, row8, image, block, sepblock };

// The outputs per work item of block and sepblock: 8 of a row by BLOCK_ROWS and
// SEPBLOCK_ROWS rows (kernels/convolve.cl, which explains the choice).
constexpr uint32_t block_rows = 4;
constexpr uint32_t sepblock_rows = 8;

// convolve_block_w<W> and convolve_sepblock_w<W> at [W - 1]: one kernel per width, as
// CONVOLVE_WIDTH_KERNELS makes them.
const char* const block_kernels[max_taps] = {"convolve_block_w1", "convolve_block_w2", "convolve_block_w3",
                                             "convolve_block_w4", "convolve_block_w5", "convolve_block_w6",
                                             "convolve_block_w7", "convolve_block_w8", "convolve_block_w9"};
const char* const sepblock_kernels[max_taps] = {"convolve_sepblock_w1", "convolve_sepblock_w2",
                                                "convolve_sepblock_w3", "convolve_sepblock_w4",
                                                "convolve_sepblock_w5", "convolve_sepblock_w6",
                                                "convolve_sepblock_w7", "convolve_sepblock_w8",
                                                "convolve_sepblock_w9"};

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param {
    param_kernel,
    param_kernel_width,
    param_kernel_height,
    param_kernel_x,
    param_kernel_y,
    param_scale,
    param_delta,
    param_border,
    param_border_value,
    param_variant,
    param_count
};

// Weights, scale and delta: wide enough for integer kernels normalised by `scale`
// (a 9x9 binomial's weights reach 4900, with scale 1/65536) and well inside float.
constexpr double weight_limit = 65536;

constexpr framecl_param_schema listSchema(const char* name, const char* help, uint32_t max_count)
{
    return {
        .name = name,
        .type = FRAMECL_PARAM_TYPE_FLOAT_LIST,
        .help = help,
        .default_number = 0,
        .default_string = nullptr,
        .min = -weight_limit,
        .max = weight_limit,
        .allowed = nullptr,
        .max_count = max_count,
    };
}

constexpr framecl_param_schema sizeSchema(const char* name, const char* help)
{
    return {
        .name = name,
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = help,
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = max_taps,
        .allowed = nullptr,
        .max_count = 0,
    };
}

constexpr framecl_param_schema numberSchema(const char* name, const char* help, double default_number)
{
    return {
        .name = name,
        .type = FRAMECL_PARAM_TYPE_FLOAT,
        .help = help,
        .default_number = default_number,
        .default_string = nullptr,
        .min = -weight_limit,
        .max = weight_limit,
        .allowed = nullptr,
        .max_count = 0,
    };
}

const framecl_param_schema params[param_count] = {
    listSchema("kernel",
               "a 2D kernel's weights, row-major: kernel_height rows of kernel_width; or give kernel_x and "
               "kernel_y instead",
               max_taps * max_taps),
    sizeSchema("kernel_width", "the 2D kernel's width, 1 to 9; needed with kernel, not given otherwise"),
    sizeSchema("kernel_height", "the 2D kernel's height, 1 to 9; needed with kernel, not given otherwise"),
    listSchema("kernel_x", "a separable kernel's horizontal taps, 1 to 9, left to right (with kernel_y)", max_taps),
    listSchema("kernel_y", "a separable kernel's vertical taps, 1 to 9, top to bottom (with kernel_x)", max_taps),
    numberSchema("scale", "multiplies the weighted sum", 1),
    numberSchema("delta", "added to the scaled sum before rounding", 0),
    borderSchema(),
    borderValueSchema(),
    variantSchema("the kernels: direct (one output per work item), separable (kernel_x and kernel_y only: "
                  "horizontal pass, then vertical), separable8 (separable, 8 outputs per work item), row8 "
                  "(one pass, 8 outputs per work item, vector loads), image (direct, reading an image), block "
                  "(one pass, 8x4 outputs per work item, the width compiled in), sepblock (kernel_x and kernel_y "
                  "only: both passes in one, 8x8 outputs per work item) or auto", variants),
};

const char* const kernel_files[] = {"convolve.cl"};

// The stage's kernel: a 2D one (`kernel` set, x and y null) or a separable pair
// (`x` and `y` set, kernel null), width x height taps.
struct Taps {
    const double* kernel = nullptr;
    const double* x = nullptr;
    const double* y = nullptr;
    uint32_t width = 0;
    uint32_t height = 0;

    bool pair() const { return kernel == nullptr; }

    // The weight of window row j, column i, unscaled; a pair's is ky[j] kx[i].
    double at(uint32_t j, uint32_t i) const { return pair() ? y[j] * x[i] : kernel[j * width + i]; }
};

// Reads the kernel parameters into `taps`; false with a message naming the parameters
// when they do not give exactly one kernel (docs/filters.md).
bool readTaps(const framecl_param_value* values, Taps& taps, char* error, size_t error_size)
{
    const framecl_param_value& kernel = values[param_kernel];
    const framecl_param_value& kernel_x = values[param_kernel_x];
    const framecl_param_value& kernel_y = values[param_kernel_y];
    const auto width = uint32_t(values[param_kernel_width].int_value);
    const auto height = uint32_t(values[param_kernel_height].int_value);
    const bool two_d = kernel.list_count > 0;
    const bool pair = kernel_x.list_count > 0 || kernel_y.list_count > 0;

    if (two_d && pair) {
        std::snprintf(error, error_size,
                      "give either kernel (with kernel_width and kernel_height) or kernel_x and "
                      "kernel_y, not both");
        return false;
    }
    if (!two_d && !pair) {
        std::snprintf(error, error_size,
                      "no kernel: give kernel with kernel_width and kernel_height, or kernel_x and kernel_y");
        return false;
    }
    if (two_d) {
        if (width == 0 || height == 0) {
            std::snprintf(error, error_size,
                          "kernel has %u values but needs kernel_width and kernel_height (1 to 9)",
                          kernel.list_count);
            return false;
        }
        if (kernel.list_count != width * height) {
            std::snprintf(error, error_size, "kernel has %u values, kernel_width x kernel_height is %u x %u = %u",
                          kernel.list_count, width, height, width * height);
            return false;
        }
        taps.kernel = kernel.list;
        taps.width = width;
        taps.height = height;
        return true;
    }
    if (kernel_x.list_count == 0 || kernel_y.list_count == 0) {
        std::snprintf(error, error_size, "%s needs %s: a separable kernel takes both (use 1 tap, [1], for none)",
                      kernel_x.list_count ? "kernel_x" : "kernel_y", kernel_x.list_count ? "kernel_y" : "kernel_x");
        return false;
    }
    if (width != 0 || height != 0) {
        std::snprintf(error, error_size,
                      "kernel_width and kernel_height go with kernel; kernel_x and kernel_y are "
                      "sized by their lengths");
        return false;
    }
    taps.x = kernel_x.list;
    taps.y = kernel_y.list;
    taps.width = kernel_x.list_count;
    taps.height = kernel_y.list_count;
    return true;
}

// The variant a stage runs, `auto` resolved: block for a 2D kernel, sepblock for a pair.
// Both are built for a GPU, where row8 and separable8 are bound by neither their
// multiply-adds nor their input loads (docs/benchmarks.md, "What bounds the missed
// targets": on the H100 row8 takes 0.30 ms on 5x5 at 7680x4320 with its loads removed,
// about 10x its multiply-adds at the float rate) but by what the run-time kernel size
// costs them: taps in loops that are not unrolled, each pixel converted by an
// instruction slower than a float operation, and for separable8 the float
// intermediate (8 of the 10 bytes it moves per pixel).
// - a 2D kernel: block. The same W x H multiply-adds per output as row8, with the taps
//   unrolled (each window row's pixels in registers), and each input row loaded and unpacked once for
//   4 output rows instead of once per output row (2 (4 + H - 1) / 4 bytes per output
//   against 2 H: 4 against 10 for 5x5).
// - a pair: sepblock. W (8 + H - 1) / 8 + H multiply-adds per output, 27 for 9 + 9
//   against block's 81 (separable8's 18 come with the intermediate), and no
//   intermediate: 1 byte written per output and about 4 read from the input (mostly from
//   cache), where separable8 also writes and reads 4 each of intermediate, whose traffic
//   alone exceeds the 9 + 9 target's time. Also for a pair with a single tap on one side,
//   where block does about as many multiply-adds (7 against 8.75 for 1 + 7): one rule
//   keeps auto one pass for every pair.
// Not for PoCL, whose work items in vector lanes cannot hold the blocks' sums in registers:
// there block is slower than row8 on 5x5 and sepblock ties separable8 (docs/filters.md,
// `convolve`); the tuner, timing every variant on the device, picks there.
Variant variantOf(const framecl_param_value* values, const Taps& taps)
{
    const Variant variant = Variant(enumIndex(values[param_variant], variants));
    if (variant != variant_auto)
        return variant;
    return taps.pair() ? sepblock : block;
}

// False, with a message, when the stage names a separable variant for a 2D kernel.
bool variantTakes(const framecl_param_value* values, const Taps& taps, char* error, size_t error_size)
{
    const Variant variant = Variant(enumIndex(values[param_variant], variants));
    if ((variant == separable || variant == separable8 || variant == sepblock) && !taps.pair()) {
        std::snprintf(error, error_size, "variant %s needs kernel_x and kernel_y, not a 2D kernel",
                      variants[variant]);
        return false;
    }
    return true;
}

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out, char* error,
              size_t error_size)
{
    // The parameters first: their problem is the same for every input, so a config
    // check that tries several formats reports it rather than a format.
    Taps taps;
    if (!readTaps(values, taps, error, error_size) || !variantTakes(values, taps, error, error_size))
        return 1;
    if (in->fourcc != DRM_FORMAT_R8) {
        char text[5];
        std::snprintf(error, error_size, "input must be R8, got %s", formatName(in->fourcc, text));
        return 1;
    }
    *out = *in;
    return 0;
}

framecl_arg constantArg(uint32_t index)
{
    framecl_arg arg{};
    arg.kind = FRAMECL_ARG_CONSTANT;
    arg.index = index;
    return arg;
}

framecl_arg floatArg(float value)
{
    framecl_arg arg{};
    arg.kind = FRAMECL_ARG_FLOAT;
    arg.float_value = value;
    return arg;
}

// Constant `index` of the plan: `count` floats, each weight(k) computed in double and
// rounded once to float.
template <typename Weight>
void setWeights(framecl_plan* plan, uint32_t index, uint32_t count, Weight weight)
{
    framecl_constant& constant = plan->constants[index];
    for (uint32_t k = 0; k < count; ++k) {
        const float value = float(weight(k));
        std::memcpy(constant.bytes + k * sizeof value, &value, sizeof value);
    }
    constant.size = uint32_t(count * sizeof(float));
}

// Each work item writes its own outputs and reads only the input, so the daemon may
// split every dispatch into tiles along either axis.
void startDispatch(framecl_dispatch& dispatch, const char* kernel, size_t work_items_x, const framecl_format* in)
{
    dispatch.kernel = kernel;
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = work_items_x;
    dispatch.global[1] = in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
}

// convolve_{direct,row8,image}(src, dst, width, height, weights, kernel_width,
// kernel_height, border, border_value, delta), or convolve_block_w<W> with the same
// arguments but kernel_width, compiled in; constant 0 holds the kernel_height x kernel_width
// scaled weights, row-major (a pair's outer product). convolve_image's src is an image.
void planOnePass(const framecl_format* in, const framecl_param_value* values, const Taps& taps, Variant variant,
                 framecl_plan* plan)
{
    const double scale = values[param_scale].float_value;
    setWeights(plan, 0, taps.width * taps.height,
               [&](uint32_t k) { return scale * taps.at(k / taps.width, k % taps.width); });
    plan->constant_count = 1;

    framecl_dispatch& dispatch = plan->dispatches[0];
    if (variant == row8) {
        startDispatch(dispatch, "convolve_row8", (in->width + 7) / 8, in);
    } else if (variant == block) {
        startDispatch(dispatch, block_kernels[taps.width - 1], (in->width + 7) / 8, in);
        dispatch.global[1] = (in->height + block_rows - 1) / block_rows;
    } else {
        startDispatch(dispatch, variant == image ? "convolve_image" : "convolve_direct", in->width, in);
    }
    uint32_t arg = 0;
    dispatch.args[arg++] = planeArg(variant == image ? FRAMECL_ARG_INPUT_IMAGE : FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[arg++] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[arg++] = uintArg(in->width);
    dispatch.args[arg++] = uintArg(in->height);
    dispatch.args[arg++] = constantArg(0);
    if (variant != block)
        dispatch.args[arg++] = uintArg(taps.width);
    dispatch.args[arg++] = uintArg(taps.height);
    dispatch.args[arg++] = uintArg(enumIndex(values[param_border], border_modes));
    dispatch.args[arg++] = uintArg(uint32_t(values[param_border_value].int_value));
    dispatch.args[arg++] = floatArg(float(values[param_delta].float_value));
    dispatch.arg_count = arg;
    plan->dispatch_count = 1;
}

// convolve_rows[8](src, sums, width, height, weights, kernel_width, border,
// border_value) with constant 0 = kernel_x, then convolve_columns[8](sums, dst, width,
// height, weights, kernel_height, border, border_row, delta) with constant 1 =
// scale x kernel_y. The intermediate holds one float per pixel: an ABGR8888 frame of
// the image's size (4 bytes per pixel, tightly packed) whose bits the daemon never
// interprets. sepblock is one dispatch, convolve_sepblock_w<W>(src, dst, width, height,
// kernel_x, kernel_y, kernel_height, border, border_value, border_row, delta), with the
// same two constants and no intermediate.
void planSeparable(const framecl_format* in, const framecl_param_value* values, const Taps& taps, Variant variant,
                   framecl_plan* plan)
{
    const double scale = values[param_scale].float_value;
    const uint32_t border = enumIndex(values[param_border], border_modes);
    const auto border_value = uint32_t(values[param_border_value].int_value);
    const float delta = float(values[param_delta].float_value);
    setWeights(plan, 0, taps.width, [&](uint32_t i) { return taps.x[i]; });
    setWeights(plan, 1, taps.height, [&](uint32_t j) { return scale * taps.y[j]; });
    plan->constant_count = 2;

    // A row outside the image under a constant border: every pixel border_value.
    double x_sum = 0;
    for (uint32_t i = 0; i < taps.width; ++i)
        x_sum += taps.x[i];
    const float border_row = float(border_value * x_sum);

    if (variant == sepblock) {
        framecl_dispatch& dispatch = plan->dispatches[0];
        startDispatch(dispatch, sepblock_kernels[taps.width - 1], (in->width + 7) / 8, in);
        dispatch.global[1] = (in->height + sepblock_rows - 1) / sepblock_rows;
        dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
        dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
        dispatch.args[2] = uintArg(in->width);
        dispatch.args[3] = uintArg(in->height);
        dispatch.args[4] = constantArg(0);
        dispatch.args[5] = constantArg(1);
        dispatch.args[6] = uintArg(taps.height);
        dispatch.args[7] = uintArg(border);
        dispatch.args[8] = uintArg(border_value);
        dispatch.args[9] = floatArg(border_row);
        dispatch.args[10] = floatArg(delta);
        dispatch.arg_count = 11;
        plan->dispatch_count = 1;
        return;
    }

    const bool eight = variant == separable8;
    const size_t work_items_x = eight ? (in->width + 7) / 8 : in->width;
    plan->intermediates[0].format = {DRM_FORMAT_ABGR8888, in->width, in->height};
    plan->intermediate_count = 1;

    framecl_dispatch& rows = plan->dispatches[0];
    startDispatch(rows, eight ? "convolve_rows8" : "convolve_rows", work_items_x, in);
    rows.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    rows.args[1] = planeArg(FRAMECL_ARG_INTERMEDIATE, 0);
    rows.args[2] = uintArg(in->width);
    rows.args[3] = uintArg(in->height);
    rows.args[4] = constantArg(0);
    rows.args[5] = uintArg(taps.width);
    rows.args[6] = uintArg(border);
    rows.args[7] = uintArg(border_value);
    rows.arg_count = 8;

    framecl_dispatch& columns = plan->dispatches[1];
    startDispatch(columns, eight ? "convolve_columns8" : "convolve_columns", work_items_x, in);
    columns.args[0] = planeArg(FRAMECL_ARG_INTERMEDIATE, 0);
    columns.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    columns.args[2] = uintArg(in->width);
    columns.args[3] = uintArg(in->height);
    columns.args[4] = constantArg(1);
    columns.args[5] = uintArg(taps.height);
    columns.args[6] = uintArg(border);
    columns.args[7] = floatArg(border_row);
    columns.args[8] = floatArg(delta);
    columns.arg_count = 9;
    plan->dispatch_count = 2;
}

// `in` is a format negotiate accepted with these parameters; they are checked again all
// the same, as planSeparable needs a pair.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*, framecl_plan* plan, char* error,
         size_t error_size)
{
    Taps taps;
    if (!readTaps(values, taps, error, error_size) || !variantTakes(values, taps, error, error_size))
        return 1;
    const Variant variant = variantOf(values, taps);
    switch (variant) {
    case separable:
    case separable8:
    case sepblock:
        planSeparable(in, values, taps, variant, plan);
        break;
    case direct:
    case image:
    case row8:
    case block:
        planOnePass(in, values, taps, variant, plan);
        break;
    case variant_auto: // resolved by variantOf
        break;
    }
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "convolve",
    .version = PLUGIN_VERSION,
    .description = "Convolution with a 2D or separable kernel of up to 9x9 (OpenCV's filter2D, sepFilter2D)",
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
