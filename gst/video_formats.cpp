#include "video_formats.hpp"

#include <limits>

#include <fmt/format.h>

namespace framecl::gst {
namespace {

struct FormatPair {
    GstVideoFormat video_format;
    uint32_t fourcc;
};

// GRAY16_LE carries R16's bytes as they are: framecl's signed gradients (Sobel's gx,
// gy) read as two's complement, which GStreamer has no format for.
constexpr FormatPair format_pairs[] = {
    {GST_VIDEO_FORMAT_NV12, DRM_FORMAT_NV12},
    {GST_VIDEO_FORMAT_RGBA, DRM_FORMAT_ABGR8888},
    {GST_VIDEO_FORMAT_GRAY8, DRM_FORMAT_R8},
    {GST_VIDEO_FORMAT_GRAY16_LE, DRM_FORMAT_R16},
};

void copyField(GstStructure* to, const GstStructure* from, const char* field)
{
    if (const GValue* value = gst_structure_get_value(from, field))
        gst_structure_set_value(to, field, value);
}

} // namespace

uint32_t fourccOf(GstVideoFormat format)
{
    for (const FormatPair& pair : format_pairs)
        if (pair.video_format == format)
            return pair.fourcc;
    return 0;
}

GstVideoFormat videoFormatOf(uint32_t fourcc)
{
    for (const FormatPair& pair : format_pairs)
        if (pair.fourcc == fourcc)
            return pair.video_format;
    return GST_VIDEO_FORMAT_UNKNOWN;
}

Result<framecl_frame_layout> layoutOf(const GstVideoInfo& info, gsize memory_offset)
{
    const GstVideoFormat format = GST_VIDEO_INFO_FORMAT(&info);
    framecl_frame_layout layout{};
    layout.fourcc = fourccOf(format);
    if (layout.fourcc == 0)
        return fail(fmt::format("framecl takes no {} frames (only NV12, RGBA, GRAY8 and GRAY16_LE)",
                                gst_video_format_to_string(format)));
    layout.width = GST_VIDEO_INFO_WIDTH(&info);
    layout.height = GST_VIDEO_INFO_HEIGHT(&info);
    layout.num_planes = GST_VIDEO_INFO_N_PLANES(&info);
    for (uint32_t plane = 0; plane < layout.num_planes; ++plane) {
        const gsize offset = memory_offset + GST_VIDEO_INFO_PLANE_OFFSET(&info, plane);
        const gint stride = GST_VIDEO_INFO_PLANE_STRIDE(&info, plane);
        if (stride <= 0)
            return fail(fmt::format("plane {} of a {} frame has stride {}; framecl needs rows top to bottom",
                                    plane, gst_video_format_to_string(format), stride));
        if (offset > std::numeric_limits<uint32_t>::max())
            return fail(fmt::format("plane {} of a {} frame begins {} bytes into its buffer, past framecl's 4 GiB",
                                    plane, gst_video_format_to_string(format), offset));
        layout.planes[plane] = {uint32_t(offset), uint32_t(stride)};
    }
    if (const char* problem = framecl_layout_problem(&layout))
        return fail(fmt::format("a {} {}x{} frame: {}", gst_video_format_to_string(format), layout.width,
                                layout.height, problem));
    return layout;
}

Result<framecl_frame_layout> layoutOf(GstBuffer* buffer, const GstVideoInfo& info)
{
    GstVideoInfo laid_out = info;
    if (const GstVideoMeta* meta = gst_buffer_get_video_meta(buffer)) {
        if (meta->format != GST_VIDEO_INFO_FORMAT(&info) || meta->width != guint(GST_VIDEO_INFO_WIDTH(&info)) ||
            meta->height != guint(GST_VIDEO_INFO_HEIGHT(&info)))
            return fail(fmt::format("a buffer's video meta says {} {}x{}, but the caps say {} {}x{}",
                                    gst_video_format_to_string(meta->format), meta->width, meta->height,
                                    gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
                                    GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info)));
        for (guint plane = 0; plane < meta->n_planes; ++plane) {
            GST_VIDEO_INFO_PLANE_OFFSET(&laid_out, plane) = meta->offset[plane];
            GST_VIDEO_INFO_PLANE_STRIDE(&laid_out, plane) = meta->stride[plane];
        }
    }
    return layoutOf(laid_out, gst_buffer_peek_memory(buffer, 0)->offset);
}

GstCaps* capsFor(const framecl_frame_layout& output, const GstStructure* input)
{
    const GstVideoFormat format = videoFormatOf(output.fourcc);
    GstCaps* caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, gst_video_format_to_string(format),
                                        "width", G_TYPE_INT, gint(output.width), "height", G_TYPE_INT,
                                        gint(output.height), nullptr);
    GstStructure* structure = gst_caps_get_structure(caps, 0);
    copyField(structure, input, "framerate");
    // A pipeline that keeps the format did not convert colours: the input's colour
    // description still holds. One that changes it leaves GStreamer's defaults.
    const char* input_format = gst_structure_get_string(input, "format");
    if (input_format && gst_video_format_from_string(input_format) == format) {
        copyField(structure, input, "colorimetry");
        copyField(structure, input, "chroma-site");
    }
    // A scaler's output is taken to have square pixels: framecl's pipelines name an
    // output size, not a display aspect ratio to keep.
    gint width = 0, height = 0;
    gst_structure_get_int(input, "width", &width);
    gst_structure_get_int(input, "height", &height);
    if (guint(width) == output.width && guint(height) == output.height)
        copyField(structure, input, "pixel-aspect-ratio");
    else
        gst_structure_set(structure, "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, nullptr);
    return caps;
}

} // namespace framecl::gst
