#include "frame_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <stb/stb_image_write.h>

namespace framecl::cli {
namespace {

const char* formatText(uint32_t fourcc)
{
    const char* name = framecl_format_name(fourcc);
    return name ? name : "a format framecl does not know";
}

bool covers(std::span<const uint8_t> buffer, const framecl_frame_layout& layout)
{
    return framecl_layout_problem(&layout) == nullptr && buffer.size() >= framecl_layout_end(&layout);
}

} // namespace

bool pngHoldsFormat(uint32_t fourcc)
{
    return fourcc == DRM_FORMAT_R8 || fourcc == DRM_FORMAT_ABGR8888;
}

const char* frameFileExtension(uint32_t fourcc)
{
    return pngHoldsFormat(fourcc) ? ".png" : ".raw";
}

Result<void> writePngFrame(const std::filesystem::path& file, const framecl_frame_layout& layout,
                           std::span<const uint8_t> buffer)
{
    if (!pngHoldsFormat(layout.fourcc))
        return fail(fmt::format("{}: PNG output needs R8 or ABGR8888, the pipeline gives {}", file.string(),
                                formatText(layout.fourcc)));
    if (!covers(buffer, layout))
        return fail(fmt::format("{}: the frame's buffer does not hold its layout", file.string()));
    const int channels = layout.fourcc == DRM_FORMAT_R8 ? 1 : 4;
    if (!stbi_write_png(file.c_str(), int(layout.width), int(layout.height), channels,
                        buffer.data() + layout.planes[0].offset, int(layout.planes[0].stride)))
        return fail(fmt::format("{}: could not write the PNG file", file.string()));
    return {};
}

Result<void> writeRawFrame(const std::filesystem::path& file, const framecl_frame_layout& layout,
                           std::span<const uint8_t> buffer)
{
    if (!covers(buffer, layout))
        return fail(fmt::format("{}: the frame's buffer does not hold its layout", file.string()));
    // The packed layout of the same format and size gives each plane's row length and
    // row count (its bytes divided by its row length).
    framecl_frame_layout packed{};
    const uint64_t packed_size = framecl_packed_layout(layout.fourcc, layout.width, layout.height, &packed);

    std::unique_ptr<FILE, int (*)(FILE*)> out(fopen(file.c_str(), "wb"), fclose);
    if (!out)
        return fail(fmt::format("{}: {}", file.string(), strerror(errno)));
    for (uint32_t p = 0; p < packed.num_planes; ++p) {
        const uint64_t row = packed.planes[p].stride;
        const uint64_t plane_end = p + 1 < packed.num_planes ? packed.planes[p + 1].offset : packed_size;
        const uint64_t rows = (plane_end - packed.planes[p].offset) / row;
        for (uint64_t r = 0; r < rows; ++r) {
            const uint8_t* source = buffer.data() + layout.planes[p].offset + r * layout.planes[p].stride;
            if (fwrite(source, 1, row, out.get()) != row)
                return fail(fmt::format("{}: {}", file.string(), strerror(errno)));
        }
    }
    if (fclose(out.release()) != 0)
        return fail(fmt::format("{}: {}", file.string(), strerror(errno)));
    return {};
}

} // namespace framecl::cli
