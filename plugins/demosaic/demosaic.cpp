// The `demosaic` plugin: a Bayer plane with one sample per byte or 16-bit word to RGB in
// ABGR16161616, as docs/filters.md specifies it; the kernels are in
// kernels/demosaic.cl. `method` chooses the interpolation:
//   bilinear  OpenCV's COLOR_Bayer*2BGR, byte for byte away from the plane's outer pixel
//   mhc       Malvar, He and Cutler's gradient-corrected filters (5x5), sharper at edges
// Packed formats are the `bayer` stage's to unpack first. The kernels and the block
// functions a fused run calls (plugin.h, "Fusable stages": a stencil that reads its input,
// block 2x2) are one code in demosaic.cl, so a fused run gives the kernels' bytes.
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// The values of `method`, in the order of the Method enum.
const char* const methods[] = {"mhc", "bilinear", nullptr};
enum Method { mhc, bilinear };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_method, param_count };

const framecl_param_schema params[param_count] = {
    {
        .name = "method",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the interpolation: mhc (Malvar-He-Cutler, gradient-corrected, 5x5) or bilinear (OpenCV's "
                "COLOR_Bayer*2BGR, 3x3)",
        .default_number = 0,
        .default_string = "mhc",
        .min = 0,
        .max = 0,
        .allowed = methods,
        .max_count = 0,
    },
};

const char* const kernel_files[] = {"demosaic.cl"};

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out, char* error,
              size_t error_size)
{
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    char text[5];
    if (!bayer) {
        std::snprintf(error, error_size, "input must be a Bayer format (SRGGB8 ... SGBRG12), got %s",
                      formatName(in->fourcc, text));
        return 1;
    }
    if (bayer->unpacked != bayer->fourcc) {
        std::snprintf(error, error_size,
                      "input %s is packed: demosaic reads one sample per byte or word, so unpack it with a `bayer` "
                      "stage first",
                      bayer->name);
        return 1;
    }
    *out = {DRM_FORMAT_ABGR16161616, in->width, in->height};
    return 0;
}

// The kernel and the block function of kernels/demosaic.cl for `bayer` (the input's
// format) and the configured method.
struct Functions {
    const char* kernel;
    const char* block;
};

Functions functionsFor(const BayerFormat& bayer, const framecl_param_value* values)
{
    static constexpr Functions functions[2][2] = {
        {{"demosaic_bilinear_bytes", "demosaic_bilinear_bytes_block"},
         {"demosaic_bilinear_words", "demosaic_bilinear_words_block"}},
        {{"demosaic_mhc_bytes", "demosaic_mhc_bytes_block"},
         {"demosaic_mhc_words", "demosaic_mhc_words_block"}},
    };
    const bool use_mhc = enumIndex(values[param_method], methods) == mhc;
    return functions[use_mhc][bayer.packing == BayerPacking::words];
}

// demosaic_<method>_<bytes|words>(src plane, dst plane, width, height, params): one work
// item per 2x2 block of the pattern.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*,
         framecl_plan* plan, char* error, size_t error_size)
{
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    if (!bayer) {
        std::snprintf(error, error_size, "not a Bayer format");
        return 1;
    }
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = functionsFor(*bayer, values).kernel;
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width / 2;
    dispatch.global[1] = in->height / 2;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.args[4] = paramsArg();
    dispatch.arg_count = 5;
    plan->dispatch_count = 1;
    return 0;
}

// Four uint32: red_x and red_y (R's place in the pattern's 2x2 block), max_code (the
// largest code) and bits. They follow from the input format alone, but travel in the
// block rather than as kernel arguments: the block function a fused run calls receives
// nothing else.
int paramBlock(const framecl_format* in, const framecl_param_value*, uint8_t* block, uint32_t block_size,
               uint32_t* used, char* error, size_t error_size)
{
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    if (!bayer) {
        std::snprintf(error, error_size, "not a Bayer format");
        return 1;
    }
    const uint32_t red_at = uint32_t(std::strchr(bayer->order, 'R') - bayer->order);
    const uint32_t words[4] = {red_at % 2, red_at / 2, bayer->maxCode(), bayer->bits};
    *used = 0;
    return appendToBlock(block, block_size, used, words, 4) ? 0 : 1;
}

// A stencil that may begin a fused run, whatever the method and format: its block
// function computes a 2x2 block of the output from the input plane, as the kernel does.
int pointwise(const framecl_format* in, const framecl_param_value* values, framecl_pointwise* pointwise, char* error,
              size_t error_size)
{
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    if (!bayer) {
        std::snprintf(error, error_size, "not a Bayer format");
        return 1;
    }
    *pointwise = {.function = functionsFor(*bayer, values).block,
                  .kernel_file = 0,
                  .block_width = 2,
                  .block_height = 2,
                  .reads_input = 1,
                  .fused_loads = 0};
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "demosaic",
    .version = PLUGIN_VERSION,
    .description = "Bayer samples to RGB (bilinear or Malvar-He-Cutler)",
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
