#pragma once
// Image files in and out of the CLI: PNG, JPEG, PGM and PPM in (through stb_image),
// PNG out. Grey images become R8 frames, colour images ABGR8888 (bytes R, G, B, A).

#include <filesystem>

#include "base/result.hpp"
#include "pipeline/host_image.hpp"

namespace framecl::cli {

Result<pipeline::HostImage> readImageFile(const std::filesystem::path& file);
Result<void> writePng(const std::filesystem::path& file, const pipeline::HostImage& image);

} // namespace framecl::cli
