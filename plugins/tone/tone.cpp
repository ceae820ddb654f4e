// The `tone` plugin: a tone curve from linear RGB in ABGR16161616 to ABGR8888, as
// docs/filters.md specifies it; the kernel and the pointwise function (plugin.h,
// "Pointwise stages") are in kernels/tone.cl. The curve is a table of up to 4096 points,
// interpolated linearly in integers: the sRGB transfer function sampled here, in double,
// or the stage's own `lut`. The table travels in the stage's parameter block, where a
// camera's control loop can change it without the session's recording being made anew.
#include <cmath>
#include <cstdio>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// The values of `curve`, in the order of the Curve enum.
const char* const curves[] = {"srgb", "lut", nullptr};
enum Curve { srgb, lut };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param { param_curve, param_lut, param_count };

constexpr uint32_t max_points = 4096;

const framecl_param_schema params[param_count] = {
    {
        .name = "curve",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the curve: srgb (the sRGB transfer function, sampled at 4096 points) or lut (`lut`'s points)",
        .default_number = 0,
        .default_string = "srgb",
        .min = 0,
        .max = 0,
        .allowed = curves,
        .max_count = 0,
    },
    {
        .name = "lut",
        .type = FRAMECL_PARAM_TYPE_FLOAT_LIST,
        .help = "with curve = \"lut\": 2 to 4096 outputs (0 to 1) at inputs evenly spaced from 0 to 1, "
                "interpolated linearly between them",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = 1,
        .allowed = nullptr,
        .max_count = max_points,
    },
};

const char* const kernel_files[] = {"tone.cl"};

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out, char* error,
              size_t error_size)
{
    // What no input format changes first: the catalog then reports it as it is.
    const uint32_t points = values[param_lut].list_count;
    if (enumIndex(values[param_curve], curves) == lut && points < 2) {
        std::snprintf(error, error_size, "curve = \"lut\" needs a lut of 2 to %u points, got %u", max_points, points);
        return 1;
    }
    if (enumIndex(values[param_curve], curves) == srgb && points != 0) {
        std::snprintf(error, error_size, "lut is set, but curve is \"srgb\": set curve = \"lut\" to use it");
        return 1;
    }
    char text[5];
    if (in->fourcc != DRM_FORMAT_ABGR16161616) {
        std::snprintf(error, error_size, "input must be ABGR16161616, got %s", formatName(in->fourcc, text));
        return 1;
    }
    *out = {DRM_FORMAT_ABGR8888, in->width, in->height};
    return 0;
}

// tone(src plane, dst plane, width, height, params): one work item per pixel. The
// parameter block holds the number of points n as a uint, then 4096 ushorts, the first
// n the curve's outputs in units of 1/65535 at inputs i x 65535 / (n - 1).
int plan(const framecl_format* in, const framecl_param_value*, const framecl_plan_request*, framecl_plan* plan,
         char*, size_t)
{
    plan->dispatches[0] = pixelDispatch("tone", *in);
    plan->dispatches[0].args[plan->dispatches[0].arg_count++] = paramsArg();
    plan->dispatch_count = 1;
    return 0;
}

// The sRGB transfer function (IEC 61966-2-1) of a linear value in [0, 1].
double srgbEncode(double linear)
{
    return linear <= 0.0031308 ? 12.92 * linear : 1.055 * std::pow(linear, 1.0 / 2.4) - 0.055;
}

int paramBlock(const framecl_format*, const framecl_param_value* values, uint8_t* block, uint32_t block_size,
               uint32_t* used, char*, size_t)
{
    const framecl_param_value& table = values[param_lut];
    const bool own = enumIndex(values[param_curve], curves) == lut;
    const uint32_t points = own ? table.list_count : max_points;
    // Room for the longest table whatever this one's length, so that a frame may change
    // it to any length (plugin.h: the block keeps its size).
    uint16_t outputs[max_points] = {};
    for (uint32_t i = 0; i < points; ++i) {
        const double value = own ? table.list[i] : srgbEncode(double(i) / double(points - 1));
        outputs[i] = uint16_t(std::lround(value * 65535.0));
    }
    *used = 0;
    return appendToBlock(block, block_size, used, &points, 1) && appendToBlock(block, block_size, used, outputs, max_points)
               ? 0
               : 1;
}

// Every output pixel is a function of its input pixel alone, whatever the curve.
int pointwise(const framecl_format*, const framecl_param_value*, framecl_pointwise* pointwise, char*, size_t)
{
    *pointwise = {.function = "tone_pointwise",
                  .kernel_file = 0,
                  .block_width = 1,
                  .block_height = 1,
                  .reads_input = 0,
                  .fused_loads = 0};
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "tone",
    .version = PLUGIN_VERSION,
    .description = "Tone curve from linear 16-bit RGB to 8-bit (sRGB or a table)",
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
