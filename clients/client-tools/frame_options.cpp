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
        return fail(fmt::format("--format {}: not a format framecl knows (nv12, r8, r16, abgr8888)", format));
    const auto parsed = parseSize(size);
    if (!parsed)
        return fail(fmt::format("--size {}: expected WIDTHxHEIGHT, e.g. 1920x1080", size));
    PackedFrame frame{};
    frame.bytes = framecl_packed_layout(fourcc, parsed->width, parsed->height, &frame.layout);
    if (frame.bytes == 0 && fourcc == DRM_FORMAT_NV12 && (parsed->width % 2 || parsed->height % 2))
        return fail(fmt::format("--size {}: NV12 needs an even width and height", size));
    if (frame.bytes == 0)
        return fail(fmt::format("--size {}: a frame must be at least 1x1, with planes under 4 GiB", size));
    return frame;
}

} // namespace framecl::cli
