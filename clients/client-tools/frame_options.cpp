#include "frame_options.hpp"

#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace framecl::cli {
namespace {

struct Size {
    uint32_t width, height;
};

std::optional<uint32_t> parseDimension(const char* begin, const char* end)
{
    uint32_t value = 0;
    const auto [last, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc{} || last != end)
        return std::nullopt;
    return value;
}

std::optional<Size> parseSize(const std::string& text)
{
    const size_t x = text.find('x');
    if (x == std::string::npos)
        return std::nullopt;
    const auto width = parseDimension(text.data(), text.data() + x);
    const auto height = parseDimension(text.data() + x + 1, text.data() + text.size());
    if (!width || !height)
        return std::nullopt;
    return Size{*width, *height};
}

} // namespace

Result<PackedFrame> packedFrame(const std::string& format, const std::string& size)
{
    const uint32_t fourcc = framecl_format_from_name(format.c_str());
    if (!fourcc)
        return fail(fmt::format("--format {}: not a format framecl knows (nv12, r8, r16, abgr8888, abgr16161616, "
                                "or a Bayer format: docs/filters.md)",
                                format));
    const auto parsed = parseSize(size);
    if (!parsed)
        return fail(fmt::format("--size {}: expected WIDTHxHEIGHT, e.g. 1920x1080", size));
    PackedFrame frame{};
    frame.bytes = framecl_packed_layout(fourcc, parsed->width, parsed->height, &frame.layout);
    if (frame.bytes == 0) {
        // Strides that fit any row, so that the only problem left to name is the size's.
        framecl_frame_layout sized{fourcc, parsed->width, parsed->height, framecl_format_planes(fourcc), {}};
        for (auto& plane : sized.planes)
            plane.stride = UINT32_MAX;
        const char* problem = framecl_layout_problem(&sized);
        return fail(fmt::format("--size {}: {}", size, problem ? problem : "planes must be under 4 GiB"));
    }
    return frame;
}

} // namespace framecl::cli
