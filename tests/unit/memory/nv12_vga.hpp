#pragma once
// The frame the memory tests import and validate: NV12 640x480, packed.

#include <cstdint>

#include <sys/types.h>

#include <doctest/doctest.h>
#include <drm_fourcc.h>

#include "framecl/format.h"

namespace framecl::test {

// No limit on a buffer's pixels, where a test is not about the limit.
constexpr uint64_t no_pixel_limit = UINT64_MAX;

// NV12 640x480 packed: 307200 bytes of luma, then 153600 of chroma.
constexpr off_t nv12_vga_bytes = 460800;

inline framecl_frame_layout nv12Vga()
{
    framecl_frame_layout layout{};
    REQUIRE(framecl_packed_layout(DRM_FORMAT_NV12, 640, 480, &layout) == uint64_t(nv12_vga_bytes));
    return layout;
}

} // namespace framecl::test
