#pragma once
// A frame in host memory, tightly packed (stride = width x bytes per pixel). Used by
// in-process runs; frames from clients arrive as imported buffers instead.

#include <cstdint>
#include <string>
#include <vector>

namespace framecl::pipeline {

struct HostImage {
    uint32_t fourcc = 0; // DRM_FORMAT_R8 or DRM_FORMAT_ABGR8888
    uint32_t width = 0;
    uint32_t height = 0;
    std::vector<uint8_t> bytes;
};

// Bytes per pixel of a packed single-plane format, 0 for others.
uint32_t bytesPerPixel(uint32_t fourcc);

// "R8", "ABGR8888", or the fourcc's four characters.
std::string formatName(uint32_t fourcc);

} // namespace framecl::pipeline
