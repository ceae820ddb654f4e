#pragma once
// Output frames as files: PNG for the formats a PNG holds as they are (R8 as grey,
// ABGR8888 as RGBA, whose bytes are R, G, B, A), raw planes for the others (NV12, R16).
// Shared by the framecl CLI and framecl-mock-camera.

#include <cstdint>
#include <filesystem>
#include <span>

#include <framecl/format.h>

#include "base/result.hpp"

namespace framecl::cli {

// True for R8 and ABGR8888.
bool pngHoldsFormat(uint32_t fourcc);

// ".png" where pngHoldsFormat(), else ".raw".
const char* frameFileExtension(uint32_t fourcc);

// `buffer` holds one frame of `layout`, which must be valid.
Result<void> writePngFrame(const std::filesystem::path& file, const framecl_frame_layout& layout,
                           std::span<const uint8_t> buffer);

// Writes the planes one after another, tightly packed: the same bytes whatever strides
// the buffer had, so a reader needs only the format and size.
Result<void> writeRawFrame(const std::filesystem::path& file, const framecl_frame_layout& layout,
                           std::span<const uint8_t> buffer);

} // namespace framecl::cli
