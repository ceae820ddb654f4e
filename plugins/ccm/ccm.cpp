// The `ccm` plugin: a 3x3 colour-correction matrix with offsets on linear RGB in
// ABGR16161616, as docs/filters.md specifies it; the kernel and the pointwise function
// (plugin.h, "Pointwise stages") are in kernels/ccm.cl.
// The matrix and offsets are turned here, in double, into integers in units of 2^-12,
// so that the kernel's sums are exact and the CPU reference gets the same bytes; they
// travel in the stage's parameter block, where a camera's control loop can change them
// without the session's recording being made anew.
#include <cmath>
#include <cstdio>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_matrix, param_offsets, param_count };

constexpr double max_weight = 8;
constexpr double fraction = 4096; // 2^12

const framecl_param_schema params[param_count] = {
    {
        .name = "matrix",
        .type = FRAMECL_PARAM_TYPE_FLOAT_LIST,
        .help = "nine weights, row by row: output R, G and B each as a sum of input R, G and B times its row "
                "(each -8 to 8); unset: the identity",
        .default_number = 0,
        .default_string = nullptr,
        .min = -max_weight,
        .max = max_weight,
        .allowed = nullptr,
        .max_count = 9,
    },
    {
        .name = "offsets",
        .type = FRAMECL_PARAM_TYPE_FLOAT_LIST,
        .help = "three values added to output R, G and B, in 16-bit codes (-65535 to 65535); unset: 0",
        .default_number = 0,
        .default_string = nullptr,
        .min = -65535,
        .max = 65535,
        .allowed = nullptr,
        .max_count = 3,
    },
};

const char* const kernel_files[] = {"ccm.cl"};

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out, char* error,
              size_t error_size)
{
    // What no input format changes first: the catalog then reports it as it is.
    const uint32_t weights = values[param_matrix].list_count;
    if (weights != 0 && weights != 9) {
        std::snprintf(error, error_size, "matrix has %u value%s: give nine, row by row", weights,
                      weights == 1 ? "" : "s");
        return 1;
    }
    const uint32_t offsets = values[param_offsets].list_count;
    if (offsets != 0 && offsets != 3) {
        std::snprintf(error, error_size, "offsets has %u value%s: give three, for R, G and B", offsets,
                      offsets == 1 ? "" : "s");
        return 1;
    }
    char text[5];
    if (in->fourcc != DRM_FORMAT_ABGR16161616) {
        std::snprintf(error, error_size, "input must be ABGR16161616, got %s", formatName(in->fourcc, text));
        return 1;
    }
    *out = *in;
    return 0;
}

// ccm(src plane, dst plane, width, height, params): one work item per pixel. The
// parameter block holds twelve ints: the matrix row by row, then the offsets, each in
// units of 2^-12.
int plan(const framecl_format* in, const framecl_param_value*, const framecl_plan_request*, framecl_plan* plan,
         char*, size_t)
{
    plan->dispatches[0] = pixelDispatch("ccm", *in);
    plan->dispatches[0].args[plan->dispatches[0].arg_count++] = paramsArg();
    plan->dispatch_count = 1;
    return 0;
}

int paramBlock(const framecl_format*, const framecl_param_value* values, uint8_t* block, uint32_t block_size,
               uint32_t* used, char*, size_t)
{
    const framecl_param_value& matrix = values[param_matrix];
    const framecl_param_value& offsets = values[param_offsets];
    int32_t words[12];
    for (int i = 0; i < 9; ++i)
        words[i] = int32_t(std::lround((matrix.list_count ? matrix.list[i] : (i % 4 == 0 ? 1.0 : 0.0)) * fraction));
    for (int c = 0; c < 3; ++c)
        words[9 + c] = int32_t(std::lround((offsets.list_count ? offsets.list[c] : 0.0) * fraction));
    *used = 0;
    return appendToBlock(block, block_size, used, words, 12) ? 0 : 1;
}

// Every output pixel is a function of its input pixel alone, whatever the parameters.
int pointwise(const framecl_format*, const framecl_param_value*, framecl_pointwise* pointwise, char*, size_t)
{
    *pointwise = {.function = "ccm_pointwise",
                  .kernel_file = 0,
                  .block_width = 1,
                  .block_height = 1,
                  .reads_input = 0,
                  .fused_loads = 0};
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "ccm",
    .version = PLUGIN_VERSION,
    .description = "Colour-correction matrix with offsets on linear RGB",
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
