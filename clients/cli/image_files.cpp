#include "image_files.hpp"

#include <memory>

#include "framecl/format.h"
#include <fmt/format.h>
#include <stb/stb_image.h>

namespace framecl::cli {

Result<pipeline::HostImage> readImageFile(const std::filesystem::path& file)
{
    int width = 0, height = 0, channels = 0;
    if (!stbi_info(file.c_str(), &width, &height, &channels))
        return fail(fmt::format("{}: not an image stb_image can read ({})", file.string(), stbi_failure_reason()));

    // Grey (with or without alpha) stays one channel; anything with colour is RGBA.
    const int wanted = channels <= 2 ? 1 : 4;
    std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load(file.c_str(), &width, &height, &channels, wanted),
                                                     stbi_image_free);
    if (!pixels)
        return fail(fmt::format("{}: {}", file.string(), stbi_failure_reason()));

    const size_t size = size_t(width) * size_t(height) * size_t(wanted);
    return pipeline::HostImage{wanted == 1 ? uint32_t(DRM_FORMAT_R8) : uint32_t(DRM_FORMAT_ABGR8888), uint32_t(width),
                               uint32_t(height), std::vector<uint8_t>(pixels.get(), pixels.get() + size)};
}

} // namespace framecl::cli
