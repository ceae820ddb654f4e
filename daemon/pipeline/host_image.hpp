#pragma once
// A frame in host memory, its planes tightly packed (framecl_packed_layout). Used by
// in-process runs; frames from clients arrive as imported buffers instead.

#include <cstdint>
#include <vector>

namespace framecl::pipeline {

struct HostImage {
    uint32_t fourcc = 0; // DRM fourcc
    uint32_t width = 0;
    uint32_t height = 0;
    std::vector<uint8_t> bytes;
};

} // namespace framecl::pipeline
