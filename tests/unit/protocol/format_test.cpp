// The frame layouts of include/framecl/format.h for the formats issue 39 added: the
// Bayer formats by their V4L2 fourccs and names, their rows' bytes (MIPI CSI-2 packing
// included), the sizes each allows, and ABGR16161616.
#include <algorithm>
#include <string>

#include <doctest/doctest.h>
#include <linux/videodev2.h>

#include "framecl/format.h"
#include "known_formats.hpp"

namespace {

struct Expected {
    uint32_t fourcc;
    const char* name;
    uint32_t row_bytes_of_8; // a row of 8 samples
};

const Expected bayer[] = {
    {V4L2_PIX_FMT_SRGGB8, "SRGGB8", 8},      {V4L2_PIX_FMT_SBGGR8, "SBGGR8", 8},
    {V4L2_PIX_FMT_SGRBG8, "SGRBG8", 8},      {V4L2_PIX_FMT_SGBRG8, "SGBRG8", 8},
    {V4L2_PIX_FMT_SRGGB10, "SRGGB10", 16},   {V4L2_PIX_FMT_SBGGR10, "SBGGR10", 16},
    {V4L2_PIX_FMT_SGRBG10, "SGRBG10", 16},   {V4L2_PIX_FMT_SGBRG10, "SGBRG10", 16},
    {V4L2_PIX_FMT_SRGGB12, "SRGGB12", 16},   {V4L2_PIX_FMT_SBGGR12, "SBGGR12", 16},
    {V4L2_PIX_FMT_SGRBG12, "SGRBG12", 16},   {V4L2_PIX_FMT_SGBRG12, "SGBRG12", 16},
    {V4L2_PIX_FMT_SRGGB10P, "SRGGB10P", 10}, {V4L2_PIX_FMT_SBGGR10P, "SBGGR10P", 10},
    {V4L2_PIX_FMT_SGRBG10P, "SGRBG10P", 10}, {V4L2_PIX_FMT_SGBRG10P, "SGBRG10P", 10},
    {V4L2_PIX_FMT_SRGGB12P, "SRGGB12P", 12}, {V4L2_PIX_FMT_SBGGR12P, "SBGGR12P", 12},
    {V4L2_PIX_FMT_SGRBG12P, "SGRBG12P", 12}, {V4L2_PIX_FMT_SGBRG12P, "SGBRG12P", 12},
};

framecl_frame_layout withStride(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t stride)
{
    return {fourcc, width, height, 1, {{0, stride}, {}, {}}};
}

} // namespace

TEST_CASE("each Bayer format has its V4L2 fourcc and name, one plane, and rows of its packing")
{
    const auto known = framecl::protocol::knownFormats();
    for (const Expected& format : bayer) {
        CAPTURE(format.name);
        CHECK(std::string(framecl_format_name(format.fourcc)) == format.name);
        CHECK(framecl_format_from_name(format.name) == format.fourcc);
        CHECK(framecl_format_planes(format.fourcc) == 1);
        CHECK(std::count(known.begin(), known.end(), format.fourcc) == 1);
        framecl_frame_layout layout{};
        CHECK(framecl_packed_layout(format.fourcc, 8, 6, &layout) == uint64_t(format.row_bytes_of_8) * 6);
        CHECK(layout.planes[0].stride == format.row_bytes_of_8);
        CHECK(framecl_layout_problem(&layout) == nullptr);
        CHECK(framecl_layout_end(&layout) == uint64_t(format.row_bytes_of_8) * 6);
    }
}

TEST_CASE("a Bayer size the pattern or the packing does not allow is refused with its rule")
{
    framecl_frame_layout layout{};
    CHECK(framecl_packed_layout(V4L2_PIX_FMT_SRGGB8, 7, 6, &layout) == 0);
    CHECK(framecl_packed_layout(V4L2_PIX_FMT_SRGGB12P, 8, 5, &layout) == 0);
    CHECK(framecl_packed_layout(V4L2_PIX_FMT_SRGGB10P, 6, 6, &layout) == 0);
    CHECK(framecl_packed_layout(V4L2_PIX_FMT_SRGGB12P, 6, 6, &layout) == 9 * 6);

    const auto odd = withStride(V4L2_PIX_FMT_SGBRG10, 7, 6, 100);
    CHECK(std::string(framecl_layout_problem(&odd)) == "a Bayer format needs an even width and height");
    const auto six = withStride(V4L2_PIX_FMT_SBGGR10P, 6, 6, 100);
    CHECK(std::string(framecl_layout_problem(&six)) ==
          "a packed 10-bit Bayer format needs a width that is a multiple of 4 (4 samples in 5 bytes) and an even "
          "height");
    // RAW10 of 8 samples is 10 bytes a row, RAW12 of 6 is 9: a byte less is too little.
    const auto narrow10 = withStride(V4L2_PIX_FMT_SBGGR10P, 8, 2, 9);
    CHECK(std::string(framecl_layout_problem(&narrow10)) == "a plane's stride is smaller than its row");
    const auto exact10 = withStride(V4L2_PIX_FMT_SBGGR10P, 8, 2, 10);
    CHECK(framecl_layout_problem(&exact10) == nullptr);
    const auto narrow12 = withStride(V4L2_PIX_FMT_SGRBG12P, 6, 2, 8);
    CHECK(std::string(framecl_layout_problem(&narrow12)) == "a plane's stride is smaller than its row");
    // The end of a padded RAW10 frame: one stride per row but the last, then its 10 bytes.
    const auto padded = withStride(V4L2_PIX_FMT_SRGGB10P, 8, 4, 64);
    CHECK(framecl_layout_end(&padded) == 3 * 64 + 10);
}

TEST_CASE("ABGR16161616 holds four 16-bit values a pixel")
{
    framecl_frame_layout layout{};
    CHECK(framecl_packed_layout(DRM_FORMAT_ABGR16161616, 5, 3, &layout) == 5 * 8 * 3);
    CHECK(std::string(framecl_format_name(DRM_FORMAT_ABGR16161616)) == "ABGR16161616");
    CHECK(framecl_format_from_name("abgr16161616") == DRM_FORMAT_ABGR16161616);
}
