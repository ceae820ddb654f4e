// The `sobel` plugin: Sobel gradients of an R8 plane (guide §10.4), as docs/filters.md
// specifies them; the kernels are in kernels/sobel.cl.
//
//   output     gx or gy (R16, two's complement), or magnitude (R8)
//   norm       the magnitude: l1 = min(|gx| + |gy|, 255), l2 = round(sqrt(gx² + gy²))
//              saturated to 255
//   border     pixels outside the image: replicate, reflect101, or constant
//   border_value  the constant border's value
//   variant    pixel, row16 or block16x2 (the guide's progression), aligned16x4 (16x4
//              outputs from 16-byte loads, aligned where the planes allow), image (one
//              output per work item, read from an image: guide §6.2), or auto
#include <cstdio>
#include <cstring>

#include <framecl/plugin.h>

#include "plugin_support.hpp"

namespace {

using namespace framecl_plugins;

// The values of each ENUM parameter; an enum after a list names its indices.
const char* const outputs[] = {"gx", "gy", "magnitude", nullptr};
enum Output { output_gx, output_gy, output_magnitude };

const char* const norms[] = {"l1", "l2", nullptr};
enum Norm { norm_l1, norm_l2 };

// Each variant's kernel is in `kernels`, below, in this order.
const char* const variants[] = {"auto", "pixel", "row16", "block16x2", "aligned16x4", "image", nullptr};
constexpr unsigned image_variant = 5; // reads its input as an image

// The kernels' `result` argument (RESULT_* in kernels/sobel.cl): output and norm in one.
enum Result { result_gx, result_gy, result_l1, result_l2 };

// Parameter indices: the daemon passes one value per schema entry, in this order.
enum Param {
    param_output,
    param_norm,
    param_border,
    param_border_value,
    param_variant,
    param_count
};

const framecl_param_schema params[param_count] = {
    {
        .name = "output",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "what to write: gx or gy (R16, signed, two's complement) or magnitude (R8)",
        .default_number = 0,
        .default_string = "magnitude",
        .min = 0,
        .max = 0,
        .allowed = outputs,
        .max_count = 0,
    },
    {
        .name = "norm",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "the magnitude: l1 (|gx| + |gy|) or l2 (sqrt(gx^2 + gy^2), rounded), "
                "saturated to 255; ignored for gx and gy",
        .default_number = 0,
        .default_string = "l1",
        .min = 0,
        .max = 0,
        .allowed = norms,
        .max_count = 0,
    },
    borderSchema(),
    borderValueSchema(),
    variantSchema("the kernel: pixel (one output per work item), row16 (16x1, vector loads), "
                  "block16x2 (16x2, vector loads), aligned16x4 (16x4, aligned 16-byte loads "
                  "and stores where offsets and strides allow), image (one output per work item, read from an "
                  "image) or auto", variants),
};

const char* const kernel_files[] = {"sobel.cl"};

// The index of an ENUM parameter's value in its `allowed` list; the daemon has checked
// the value against it.
int choiceOf(const framecl_param_value* values, Param param)
{
    const char* const* allowed = params[param].allowed;
    for (int i = 0; allowed[i]; ++i)
        if (std::strcmp(values[param].string_value, allowed[i]) == 0)
            return i;
    return 0;
}

int negotiate(const framecl_format* in, const framecl_param_value* values, framecl_format* out,
              char* error, size_t error_size)
{
    if (in->fourcc != DRM_FORMAT_R8) {
        char text[5];
        std::snprintf(error, error_size, "input must be R8, got %s", formatName(in->fourcc, text));
        return 1;
    }
    const bool gradient = Output(choiceOf(values, param_output)) != output_magnitude;
    *out = {gradient ? uint32_t(DRM_FORMAT_R16) : uint32_t(DRM_FORMAT_R8), in->width, in->height};
    return 0;
}

Result resultOf(const framecl_param_value* values)
{
    switch (Output(choiceOf(values, param_output))) {
    case output_gx:
        return result_gx;
    case output_gy:
        return result_gy;
    case output_magnitude:
        break;
    }
    return Norm(choiceOf(values, param_norm)) == norm_l2 ? result_l2 : result_l1;
}

// A variant's kernel and the outputs each of its work items writes.
struct Kernel {
    const char* name;
    uint32_t outputs_x;
    uint32_t outputs_y;
};
const Kernel pixel_kernel = {"sobel_pixel", 1, 1};
const Kernel row16_kernel = {"sobel_row16", 16, 1};
const Kernel block16x2_kernel = {"sobel_block16x2", 16, 2};
const Kernel aligned16x4_kernel = {"sobel_aligned16x4", 16, 4};
const Kernel image_kernel = {"sobel_image", 1, 1};

// In the order of `variants`. auto is 16x4 (aligned16x4): each input row is one 16-byte
// load and two byte loads for the 16 outputs, made once for the whole block (1.5 bytes
// per output, against 2.25 for the guide's 16x2), and the 16-byte loads and stores are
// aligned uint4 accesses when the planes allow: NVIDIA's compiler turns the guide's
// vload16 at x0 - 1 into byte loads, which keep 16x2 far from the copy bandwidth
// (docs/benchmarks.md, "Filters: framecl-bench"). It
// keeps only three rows' passes live (two short16 each), rolling down the block, so it
// holds no more registers than 16x2. Its borders apply per row and per neighbour
// pixel, so only blocks reaching past the last column go one pixel at a time.
const Kernel kernels[] = {aligned16x4_kernel, pixel_kernel, row16_kernel, block16x2_kernel,
                          aligned16x4_kernel, image_kernel};

// sobel_<variant>(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height,
// result, border, border_value): one work item per pixel, per 16x1, 16x2 or 16x4 outputs.
// Each output row depends only on the input, so the daemon may split the dispatch into
// bands of rows to bound its GPU time.
int plan(const framecl_format* in, const framecl_param_value* values, const framecl_plan_request*, framecl_plan* plan, char*,
         size_t)
{
    const Kernel& kernel = kernels[choiceOf(values, param_variant)];
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = kernel.name;
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = (in->width + kernel.outputs_x - 1) / kernel.outputs_x;
    dispatch.global[1] = (in->height + kernel.outputs_y - 1) / kernel.outputs_y;
    dispatch.tileable_axes = FRAMECL_AXIS_Y;
    const bool image = &kernel == &kernels[image_variant];
    dispatch.args[0] = planeArg(image ? FRAMECL_ARG_INPUT_IMAGE : FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in->width);
    dispatch.args[3] = uintArg(in->height);
    dispatch.args[4] = uintArg(resultOf(values));
    dispatch.args[5] = uintArg(uint32_t(choiceOf(values, param_border)));
    dispatch.args[6] = uintArg(uint32_t(values[param_border_value].int_value));
    dispatch.arg_count = 7;
    plan->dispatch_count = 1;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "sobel",
    .version = PLUGIN_VERSION,
    .description = "Sobel gradients and edge magnitude of an R8 plane",
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
