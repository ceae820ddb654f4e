#pragma once
// Image files into the CLI: PNG, JPEG, PGM and PPM (through stb_image). Grey images
// become R8 frames, colour images ABGR8888 (bytes R, G, B, A). Output files are
// client-tools/frame_file.hpp's.

#include <filesystem>

#include "base/result.hpp"
#include "pipeline/host_image.hpp"

namespace framecl::cli {

Result<pipeline::HostImage> readImageFile(const std::filesystem::path& file);

} // namespace framecl::cli
