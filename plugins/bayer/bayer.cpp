// The `bayer` plugin: a camera sensor's raw samples made ready for demosaicing, as
// docs/filters.md specifies it; the kernels are in kernels/bayer.cl. It takes
// any Bayer format, packed or not, and writes the same order and bit depth with one
// sample per byte (8 bits) or 16-bit word (10 and 12 bits), after
//   black level      `black_level` subtracted, the rest stretched back to the full range
//   white balance    `gains` for R, G and B
// both folded here, in double, into one fixed-point factor per colour, so that the kernel
// does one integer multiply per sample and the CPU reference gets the same bytes. They
// travel in the stage's parameter block, where a camera's control loop can change them
// without the session's recording being made anew.
// With statistics = true it also makes the frame's statistics (framecl/statistics.h)
// from the same samples: zone sums below `saturation` and a luma histogram.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_black_level, param_gains, param_statistics, param_saturation, param_count };

// The gains' upper bound keeps a sample times its factor within 32 bits (bayer.cl).
constexpr double max_gain = 16;
constexpr uint32_t factor_bits = 14;

const framecl_param_schema params[param_count] = {
    {
        .name = "black_level",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the sensor's black level in the input's codes, subtracted from every sample; it must be below "
                "the format's largest code",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = 4095,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "gains",
        .type = FRAMECL_PARAM_TYPE_FLOAT_LIST,
        .help = "white-balance gains for R, G and B (three values, each 0 to 16); unset: 1, 1, 1",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = max_gain,
        .allowed = nullptr,
        .max_count = 3,
    },
    {
        .name = "statistics",
        .type = FRAMECL_PARAM_TYPE_BOOL,
        .help = "also make the frame's statistics for auto white balance and exposure: sums of R, G and B in 16x12 "
                "zones and a luma histogram (docs/filters.md, \"Statistics\")",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = 0,
        .allowed = nullptr,
        .max_count = 0,
    },
    {
        .name = "saturation",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "statistics: samples at or above this code (or the format's largest, if lower) are left out of "
                "the zone sums",
        .default_number = 4095,
        .default_string = nullptr,
        .min = 1,
        .max = 4095,
        .allowed = nullptr,
        .max_count = 0,
    },
};

const char* const kernel_files[] = {"bayer.cl"};

// The parameter block's words (bayer.cl).
constexpr uint32_t block_words = 6;

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out, char* error,
              size_t error_size)
{
    // What no input format changes first: the catalog then reports it as it is.
    const uint32_t gains = values[param_gains].list_count;
    if (gains != 0 && gains != 3) {
        std::snprintf(error, error_size, "gains has %u value%s: give three, for R, G and B", gains,
                      gains == 1 ? "" : "s");
        return 1;
    }
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    char text[5];
    if (!bayer) {
        std::snprintf(error, error_size, "input must be a Bayer format (SRGGB8 ... SGBRG12P), got %s",
                      formatName(in->fourcc, text));
        return 1;
    }
    if (values[param_black_level].int_value >= int64_t(bayer->maxCode())) {
        std::snprintf(error, error_size, "black_level %lld is not below %s's largest code, %u",
                      static_cast<long long>(values[param_black_level].int_value), bayer->name, bayer->maxCode());
        return 1;
    }
    *out = {bayer->unpacked, in->width, in->height};
    return 0;
}

// The factor of colour `channel`: gain x M / (M - black) in units of 2^-14, M being the
// largest code, so that a sample at M stays at M with a gain of 1.
uint32_t factor(const BayerFormat& bayer, const framecl_param_value* values, uint32_t channel)
{
    const double gain = values[param_gains].list_count ? values[param_gains].list[channel] : 1.0;
    const double max_code = bayer.maxCode();
    const double stretch = max_code / (max_code - double(values[param_black_level].int_value));
    return uint32_t(std::lround(gain * stretch * double(1u << factor_bits)));
}

const char* kernelOf(BayerPacking packing, bool statistics)
{
    switch (packing) {
    case BayerPacking::bytes:
        return statistics ? "bayer_levels_statistics_bytes" : "bayer_levels_bytes";
    case BayerPacking::words:
        return statistics ? "bayer_levels_statistics_words" : "bayer_levels_words";
    case BayerPacking::mipi10:
        return statistics ? "bayer_levels_statistics_mipi10" : "bayer_levels_mipi10";
    case BayerPacking::mipi12:
        return statistics ? "bayer_levels_statistics_mipi12" : "bayer_levels_mipi12";
    }
    return nullptr;
}

// bayer_levels_<packing>(src plane, dst plane, width, height, max_code, params): one work
// item per two samples side by side, which have the colours of one row of the 2x2 block.
// With statistics, bayer_levels_statistics_<packing>(src plane, dst plane, width, height,
// max_code, colours, params, statistics) instead: one work item per column of
// statistics_rows 2x2 blocks (kernels/bayer.cl, BAYER_STATISTICS_ROWS), which reads each
// sample once for both. The parameter block holds six uints: the black
// level, the factors of block positions (0, 0), (1, 0), (0, 1) and (1, 1), (x, y), and
// the saturation code.
constexpr uint32_t statistics_rows = 4;

int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*,
         framecl_plan* plan, char* error, size_t error_size)
{
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    if (!bayer) {
        std::snprintf(error, error_size, "not a Bayer format");
        return 1;
    }
    const bool statistics = values[param_statistics].int_value != 0;
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = kernelOf(bayer->packing, statistics);
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = in->width / 2;
    dispatch.global[1] = statistics ? (in->height / 2 + statistics_rows - 1) / statistics_rows : in->height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    uint32_t& count = dispatch.arg_count;
    dispatch.args[count++] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[count++] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[count++] = uintArg(in->width);
    dispatch.args[count++] = uintArg(in->height);
    dispatch.args[count++] = uintArg(bayer->maxCode());
    if (statistics)
        dispatch.args[count++] = uintArg(bayer->channel(0, 0) | bayer->channel(1, 0) << 2 |
                                         bayer->channel(0, 1) << 4 | bayer->channel(1, 1) << 6);
    dispatch.args[count++] = paramsArg();
    if (statistics)
        dispatch.args[count++].kind = FRAMECL_ARG_STATISTICS;
    plan->dispatch_count = 1;
    return 0;
}

int paramBlock(const framecl_format* in, const framecl_param_value* values, uint8_t* block, uint32_t block_size,
               uint32_t* used, char* error, size_t error_size)
{
    const BayerFormat* bayer = bayerFormat(in->fourcc);
    if (!bayer) {
        std::snprintf(error, error_size, "not a Bayer format");
        return 1;
    }
    const uint32_t words[block_words] = {
        uint32_t(values[param_black_level].int_value),
        factor(*bayer, values, bayer->channel(0, 0)),
        factor(*bayer, values, bayer->channel(1, 0)),
        factor(*bayer, values, bayer->channel(0, 1)),
        factor(*bayer, values, bayer->channel(1, 1)),
        std::min(uint32_t(values[param_saturation].int_value), bayer->maxCode()),
    };
    *used = 0;
    return appendToBlock(block, block_size, used, words, block_words) ? 0 : 1;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "bayer",
    .version = PLUGIN_VERSION,
    .description = "Bayer samples unpacked, with black level and white-balance gains",
    .param_count = param_count,
    .params = params,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
    .param_block = paramBlock,
    .pointwise = nullptr,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
