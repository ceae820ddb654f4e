// Test plugin `image_planes`: every plane of a frame, unchanged, read as an image
// (FRAMECL_ARG_INPUT_IMAGE), so that the daemon's copy of each plane format into an image
// (kernels/copy.cl) is checked byte for byte. Where the next stage reads its output as an
// image, it writes that as an image too (FRAMECL_ARG_OUTPUT_IMAGE). Kernels in
// image_planes.cl next to it.
#include <framecl/format.h>
#include <framecl/plugin.h>

namespace {

const char* const kernel_files[] = {"image_planes.cl"};

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out, char*, size_t)
{
    *out = *in;
    return 0;
}

framecl_arg arg(framecl_arg_kind kind, uint32_t value = 0)
{
    framecl_arg a{};
    a.kind = kind;
    a.index = value;
    a.uint_value = value;
    return a;
}

// Per plane p, image_to_buffer_<texel>(src image, dst, dst_offset, dst_stride, width,
// height), or image_to_image(src, dst, width, height) where the request asks.
int plan(const framecl_format* in, const framecl_param_value*, const framecl_plan_request* request,
         framecl_plan* plan, char*, size_t)
{
    const uint32_t planes = in->fourcc == DRM_FORMAT_NV12 ? 2 : 1; // a plugin links nothing of framecl
    for (uint32_t p = 0; p < planes; ++p) {
        const bool uv = in->fourcc == DRM_FORMAT_NV12 && p == 1;
        const uint32_t width = in->width, height = uv ? in->height / 2 : in->height; // UV: CL_R of its bytes
        const bool image = request->output_image_planes >> p & 1u;
        framecl_dispatch& dispatch = plan->dispatches[p];
        dispatch.kernel = image                                ? "image_to_image"
                          : in->fourcc == DRM_FORMAT_ABGR8888 ? "image_to_buffer_rgba8"
                          : in->fourcc == DRM_FORMAT_R16      ? "image_to_buffer_r16"
                                                               : "image_to_buffer_r8";
        dispatch.dims = 2;
        dispatch.global[0] = width;
        dispatch.global[1] = height;
        dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
        dispatch.args[0] = arg(FRAMECL_ARG_INPUT_IMAGE, p);
        dispatch.args[1] = arg(image ? FRAMECL_ARG_OUTPUT_IMAGE : FRAMECL_ARG_OUTPUT_PLANE, p);
        dispatch.args[2] = arg(FRAMECL_ARG_UINT, width);
        dispatch.args[3] = arg(FRAMECL_ARG_UINT, height);
        dispatch.arg_count = 4;
    }
    plan->dispatch_count = planes;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "image_planes",
    .version = "1.0",
    .description = "Every plane unchanged, read through images",
    .param_count = 0,
    .params = nullptr,
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
