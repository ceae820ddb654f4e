// The frame layouts of include/framecl/format.h.
#include "framecl/format.h"

#include <linux/videodev2.h>
#include <strings.h>

#include "known_formats.hpp"
#include "plane_rows.hpp"

namespace {

struct FormatInfo {
    uint32_t fourcc;
    const char* name;
    uint32_t planes;
    // A plane's row is width / group_pixels groups of group_bytes[p] bytes each: one pixel
    // per group for every format but the MIPI CSI-2 packed Bayer ones, whose groups are 4
    // samples in 5 bytes (10 bits) or 2 samples in 3 bytes (12 bits).
    uint32_t group_pixels;
    uint32_t group_bytes[FRAMECL_MAX_PLANES];
    uint32_t width_multiple;  // of the width: 2 for a 2x2 pattern or subsampling, 4 for RAW10 packed
    uint32_t height_multiple; // of the height: 2 for a 2x2 pattern or subsampling
    uint32_t subsampling;     // 2: planes after the first have half the rows
    const char* size_rule;    // what framecl_layout_problem says of a size the multiples refuse
};

constexpr const char* bayer_size_rule = "a Bayer format needs an even width and height";
constexpr const char* raw10_packed_size_rule = "a packed 10-bit Bayer format needs a width that is a multiple of 4 "
                                               "(4 samples in 5 bytes) and an even height";

constexpr FormatInfo bayer(uint32_t fourcc, const char* name, uint32_t bits, bool packed)
{
    if (!packed)
        return {fourcc, name, 1, 1, {bits > 8 ? 2u : 1u, 0, 0}, 2, 2, 1, bayer_size_rule};
    if (bits == 10)
        return {fourcc, name, 1, 4, {5, 0, 0}, 4, 2, 1, raw10_packed_size_rule};
    return {fourcc, name, 1, 2, {3, 0, 0}, 2, 2, 1, bayer_size_rule};
}

// NV12's second plane holds one U,V pair per 2x2 block: width bytes, height / 2 rows.
// Bayer formats carry V4L2's fourccs (DRM has none) and names, in the orders of
// docs/filters.md ("Bayer formats").
constexpr FormatInfo formats[] = {
    {DRM_FORMAT_R8, "R8", 1, 1, {1, 0, 0}, 1, 1, 1, nullptr},
    {DRM_FORMAT_R16, "R16", 1, 1, {2, 0, 0}, 1, 1, 1, nullptr},
    {DRM_FORMAT_ABGR8888, "ABGR8888", 1, 1, {4, 0, 0}, 1, 1, 1, nullptr},
    {DRM_FORMAT_ABGR16161616, "ABGR16161616", 1, 1, {8, 0, 0}, 1, 1, 1, nullptr},
    {DRM_FORMAT_NV12, "NV12", 2, 1, {1, 1, 0}, 2, 2, 2, "NV12 needs an even width and height"},
    bayer(V4L2_PIX_FMT_SRGGB8, "SRGGB8", 8, false),
    bayer(V4L2_PIX_FMT_SBGGR8, "SBGGR8", 8, false),
    bayer(V4L2_PIX_FMT_SGRBG8, "SGRBG8", 8, false),
    bayer(V4L2_PIX_FMT_SGBRG8, "SGBRG8", 8, false),
    bayer(V4L2_PIX_FMT_SRGGB10, "SRGGB10", 10, false),
    bayer(V4L2_PIX_FMT_SBGGR10, "SBGGR10", 10, false),
    bayer(V4L2_PIX_FMT_SGRBG10, "SGRBG10", 10, false),
    bayer(V4L2_PIX_FMT_SGBRG10, "SGBRG10", 10, false),
    bayer(V4L2_PIX_FMT_SRGGB12, "SRGGB12", 12, false),
    bayer(V4L2_PIX_FMT_SBGGR12, "SBGGR12", 12, false),
    bayer(V4L2_PIX_FMT_SGRBG12, "SGRBG12", 12, false),
    bayer(V4L2_PIX_FMT_SGBRG12, "SGBRG12", 12, false),
    bayer(V4L2_PIX_FMT_SRGGB10P, "SRGGB10P", 10, true),
    bayer(V4L2_PIX_FMT_SBGGR10P, "SBGGR10P", 10, true),
    bayer(V4L2_PIX_FMT_SGRBG10P, "SGRBG10P", 10, true),
    bayer(V4L2_PIX_FMT_SGBRG10P, "SGBRG10P", 10, true),
    bayer(V4L2_PIX_FMT_SRGGB12P, "SRGGB12P", 12, true),
    bayer(V4L2_PIX_FMT_SBGGR12P, "SBGGR12P", 12, true),
    bayer(V4L2_PIX_FMT_SGRBG12P, "SGRBG12P", 12, true),
    bayer(V4L2_PIX_FMT_SGBRG12P, "SGBRG12P", 12, true),
};

const FormatInfo* find(uint32_t fourcc)
{
    for (const auto& format : formats)
        if (format.fourcc == fourcc)
            return &format;
    return nullptr;
}

uint32_t planeRows(const FormatInfo& format, uint32_t plane, uint32_t height)
{
    return plane == 0 ? height : height / format.subsampling;
}

uint64_t rowBytes(const FormatInfo& format, uint32_t plane, uint32_t width)
{
    return uint64_t(width) / format.group_pixels * format.group_bytes[plane];
}

bool sizeAllowed(const FormatInfo& format, uint32_t width, uint32_t height)
{
    return width > 0 && height > 0 && width % format.width_multiple == 0 && height % format.height_multiple == 0;
}

} // namespace

extern "C" {

uint32_t framecl_format_planes(uint32_t fourcc)
{
    const FormatInfo* format = find(fourcc);
    return format ? format->planes : 0;
}

const char* framecl_format_name(uint32_t fourcc)
{
    const FormatInfo* format = find(fourcc);
    return format ? format->name : nullptr;
}

uint32_t framecl_format_from_name(const char* name)
{
    for (const auto& format : formats)
        if (name && strcasecmp(name, format.name) == 0)
            return format.fourcc;
    return 0;
}

uint64_t framecl_packed_layout(uint32_t fourcc, uint32_t width, uint32_t height, framecl_frame_layout* layout)
{
    const FormatInfo* format = find(fourcc);
    if (!format || !sizeAllowed(*format, width, height))
        return 0;
    *layout = framecl_frame_layout{fourcc, width, height, format->planes, {}};
    uint64_t offset = 0;
    for (uint32_t p = 0; p < format->planes; ++p) {
        const uint64_t stride = rowBytes(*format, p, width);
        if (offset > UINT32_MAX || stride > UINT32_MAX)
            return 0;
        layout->planes[p] = {uint32_t(offset), uint32_t(stride)};
        offset += stride * planeRows(*format, p, height);
    }
    return offset;
}

const char* framecl_layout_problem(const framecl_frame_layout* layout)
{
    const FormatInfo* format = find(layout->fourcc);
    if (!format)
        return "unknown pixel format (supported: R8, R16, ABGR8888, ABGR16161616, NV12 and the Bayer formats "
               "SRGGB8 to SGBRG12P)";
    if (layout->width == 0 || layout->height == 0)
        return "width and height must be at least 1";
    if (!sizeAllowed(*format, layout->width, layout->height))
        return format->size_rule;
    if (layout->num_planes != format->planes)
        return "wrong number of planes for the format";
    for (uint32_t p = 0; p < format->planes; ++p)
        if (layout->planes[p].stride < rowBytes(*format, p, layout->width))
            return "a plane's stride is smaller than its row";
    return nullptr;
}

uint64_t framecl_layout_end(const framecl_frame_layout* layout)
{
    const FormatInfo* format = find(layout->fourcc);
    uint64_t end = 0;
    for (uint32_t p = 0; format && p < format->planes; ++p) {
        const uint64_t rows = planeRows(*format, p, layout->height);
        const uint64_t plane_end =
            layout->planes[p].offset + (rows - 1) * layout->planes[p].stride + rowBytes(*format, p, layout->width);
        if (plane_end > end)
            end = plane_end;
    }
    return end;
}

} // extern "C"

framecl::protocol::PlaneRows framecl::protocol::planeRows(const framecl_frame_layout& layout, uint32_t plane)
{
    const FormatInfo* format = find(layout.fourcc);
    if (!format || plane >= format->planes)
        return {};
    return {layout.planes[plane].offset, layout.planes[plane].stride, rowBytes(*format, plane, layout.width),
            ::planeRows(*format, plane, layout.height)};
}

std::vector<uint32_t> framecl::protocol::knownFormats()
{
    std::vector<uint32_t> fourccs;
    for (const auto& format : formats)
        fourccs.push_back(format.fourcc);
    return fourccs;
}
