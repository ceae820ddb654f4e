// The frame layouts of include/framecl/format.h.
#include "framecl/format.h"

#include <strings.h>

#include "plane_rows.hpp"

namespace {

struct FormatInfo {
    uint32_t fourcc;
    const char* name;
    uint32_t planes;
    uint32_t bytes_per_pixel[FRAMECL_MAX_PLANES]; // per plane, in units of its own width
    uint32_t subsampling;                         // 2: planes after the first have half the rows
};

// NV12's second plane holds one U,V pair per 2x2 block: width bytes, height / 2 rows.
constexpr FormatInfo formats[] = {
    {DRM_FORMAT_R8, "R8", 1, {1, 0, 0}, 1},
    {DRM_FORMAT_R16, "R16", 1, {2, 0, 0}, 1},
    {DRM_FORMAT_ABGR8888, "ABGR8888", 1, {4, 0, 0}, 1},
    {DRM_FORMAT_NV12, "NV12", 2, {1, 1, 0}, 2},
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
    if (!format || width == 0 || height == 0 || width % format->subsampling || height % format->subsampling)
        return 0;
    *layout = framecl_frame_layout{fourcc, width, height, format->planes, {}};
    uint64_t offset = 0;
    for (uint32_t p = 0; p < format->planes; ++p) {
        const uint64_t stride = uint64_t(width) * format->bytes_per_pixel[p];
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
        return "unknown pixel format (supported: R8, R16, NV12, ABGR8888)";
    if (layout->width == 0 || layout->height == 0)
        return "width and height must be at least 1";
    if (layout->width % format->subsampling || layout->height % format->subsampling)
        return "NV12 needs an even width and height";
    if (layout->num_planes != format->planes)
        return "wrong number of planes for the format";
    for (uint32_t p = 0; p < format->planes; ++p)
        if (uint64_t(layout->planes[p].stride) < uint64_t(layout->width) * format->bytes_per_pixel[p])
            return "a plane's stride is smaller than its row";
    return nullptr;
}

uint64_t framecl_layout_end(const framecl_frame_layout* layout)
{
    const FormatInfo* format = find(layout->fourcc);
    uint64_t end = 0;
    for (uint32_t p = 0; format && p < format->planes; ++p) {
        const uint64_t rows = planeRows(*format, p, layout->height);
        const uint64_t row = uint64_t(layout->width) * format->bytes_per_pixel[p];
        const uint64_t plane_end = layout->planes[p].offset + (rows - 1) * layout->planes[p].stride + row;
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
    return {layout.planes[plane].offset, layout.planes[plane].stride,
            uint64_t(layout.width) * format->bytes_per_pixel[plane], ::planeRows(*format, plane, layout.height)};
}
