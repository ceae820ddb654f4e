#pragma once
// CPU reference for the colour conversions, written from docs/filters.md, not from
// the kernels.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace framecl::test {

// BT.601 luma of one pixel: round(0.299 R + 0.587 G + 0.114 B), halves rounded up.
inline uint8_t lumaBt601(uint8_t r, uint8_t g, uint8_t b)
{
    const unsigned thousandths = 299u * r + 587u * g + 114u * b;
    const unsigned whole = thousandths / 1000u;
    const unsigned fraction = thousandths % 1000u;
    return uint8_t(fraction >= 500u ? whole + 1u : whole);
}

// A packed ABGR8888 frame (bytes R, G, B, A) to its R8 luma plane.
inline std::vector<uint8_t> lumaPlane(const std::vector<uint8_t>& abgr)
{
    std::vector<uint8_t> luma(abgr.size() / 4);
    for (size_t i = 0; i < luma.size(); ++i)
        luma[i] = lumaBt601(abgr[4 * i], abgr[4 * i + 1], abgr[4 * i + 2]);
    return luma;
}

enum class YuvMatrix { Bt601, Bt709 };
enum class YuvRange { Limited, Full };

// A real channel value rounded to nearest, halves up, and saturated to 0..255.
inline uint8_t roundSaturate(double value)
{
    return uint8_t(std::clamp(std::floor(value + 0.5), 0.0, 255.0));
}

// One pixel's Y, Cb, Cr codes to R, G, B, in double precision:
//   limited range: Y' = (Y - 16) * 255/219, Cb' = (Cb - 128) * 255/224, Cr' likewise
//   full range:    Y' = Y,                  Cb' = Cb - 128,              Cr' likewise
//   R = Y' + 2 (1 - Kr) Cr',  B = Y' + 2 (1 - Kb) Cb',  G = (Y' - Kr R - Kb B) / Kg
// with Kr, Kb = 0.299, 0.114 (BT.601) or 0.2126, 0.0722 (BT.709) and Kg = 1 - Kr - Kb.
inline void yuvToRgb(uint8_t y, uint8_t cb, uint8_t cr, YuvMatrix matrix, YuvRange range, uint8_t rgb[3])
{
    const double kr = matrix == YuvMatrix::Bt601 ? 0.299 : 0.2126;
    const double kb = matrix == YuvMatrix::Bt601 ? 0.114 : 0.0722;
    const double kg = 1.0 - kr - kb;
    const bool limited = range == YuvRange::Limited;
    const double luma = limited ? (y - 16.0) * 255.0 / 219.0 : double(y);
    const double blue_difference = limited ? (cb - 128.0) * 255.0 / 224.0 : cb - 128.0;
    const double red_difference = limited ? (cr - 128.0) * 255.0 / 224.0 : cr - 128.0;
    const double r = luma + 2.0 * (1.0 - kr) * red_difference;
    const double b = luma + 2.0 * (1.0 - kb) * blue_difference;
    const double g = (luma - kr * r - kb * b) / kg;
    rgb[0] = roundSaturate(r);
    rgb[1] = roundSaturate(g);
    rgb[2] = roundSaturate(b);
}

// An NV12 frame, given as its packed Y plane (width x height bytes) and packed UV plane
// (height/2 rows of width bytes: Cb, Cr pairs), to packed ABGR8888 with alpha 255.
// Pixel (x, y) takes the Cb, Cr pair of its 2x2 block: UV row y/2, bytes 2 (x/2) and
// 2 (x/2) + 1.
inline std::vector<uint8_t> nv12ToAbgr(const std::vector<uint8_t>& y_plane, const std::vector<uint8_t>& uv_plane,
                                       uint32_t width, uint32_t height, YuvMatrix matrix, YuvRange range)
{
    std::vector<uint8_t> abgr(size_t(width) * height * 4);
    for (uint32_t y = 0; y < height; ++y) {
        for (uint32_t x = 0; x < width; ++x) {
            const size_t chroma = size_t(y / 2) * width + 2 * (x / 2);
            uint8_t* pixel = &abgr[(size_t(y) * width + x) * 4];
            yuvToRgb(y_plane[size_t(y) * width + x], uv_plane[chroma], uv_plane[chroma + 1], matrix, range, pixel);
            pixel[3] = 255;
        }
    }
    return abgr;
}

} // namespace framecl::test
