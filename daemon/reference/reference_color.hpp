#pragma once
// CPU reference for the colour conversions, written from docs/filters.md, not from
// the kernels.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace framecl::reference {

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

// A packed ABGR8888 frame of even sides to NV12's planes (docs/filters.md, `color`'s
// op abgr_to_nv12): weights in units of 2^-16 rounded from the matrix and range, each
// pixel's Y from its R, G, B, each 2x2 block's Cb and Cr from the block's sums.
struct Nv12Planes {
    std::vector<uint8_t> y, uv;
};

inline Nv12Planes abgrToNv12(const std::vector<uint8_t>& abgr, uint32_t width, uint32_t height, YuvMatrix matrix,
                             YuvRange range)
{
    const double kr = matrix == YuvMatrix::Bt709 ? 0.2126 : 0.299;
    const double kb = matrix == YuvMatrix::Bt709 ? 0.0722 : 0.114;
    const double kg = 1 - kr - kb;
    const bool full = range == YuvRange::Full;
    const double ys = full ? 1 : 219.0 / 255, cs = full ? 1 : 224.0 / 255;
    const auto w = [](double v) { return int64_t(std::llround(v * 65536)); };
    const int64_t y_w[3] = {w(kr * ys), w(kg * ys), w(kb * ys)};
    const int64_t u_w[3] = {w(-kr / (2 * (1 - kb)) * cs), w(-kg / (2 * (1 - kb)) * cs), w(0.5 * cs)};
    const int64_t v_w[3] = {w(0.5 * cs), w(-kg / (2 * (1 - kr)) * cs), w(-kb / (2 * (1 - kr)) * cs)};
    const int64_t y_offset = full ? 0 : 16;
    // floor((sum + offset 2^shift + 2^(shift - 1)) / 2^shift), clamped.
    const auto finish = [](int64_t sum, int64_t offset, int shift) {
        const int64_t total = sum + (offset << shift) + (int64_t(1) << (shift - 1));
        const int64_t floored = total >= 0 ? total >> shift : -((-total + (int64_t(1) << shift) - 1) >> shift);
        return uint8_t(std::clamp<int64_t>(floored, 0, 255));
    };
    Nv12Planes out{std::vector<uint8_t>(size_t(width) * height), std::vector<uint8_t>(size_t(width) * height / 2)};
    for (uint32_t by = 0; by < height / 2; ++by)
        for (uint32_t bx = 0; bx < width / 2; ++bx) {
            int64_t sums[3] = {0, 0, 0};
            for (uint32_t y = 2 * by; y < 2 * by + 2; ++y)
                for (uint32_t x = 2 * bx; x < 2 * bx + 2; ++x) {
                    const uint8_t* p = &abgr[(size_t(y) * width + x) * 4];
                    for (int c = 0; c < 3; ++c)
                        sums[c] += p[c];
                    out.y[size_t(y) * width + x] =
                        finish(y_w[0] * p[0] + y_w[1] * p[1] + y_w[2] * p[2], y_offset, 16);
                }
            out.uv[size_t(by) * width + 2 * bx] = finish(u_w[0] * sums[0] + u_w[1] * sums[1] + u_w[2] * sums[2], 128, 18);
            out.uv[size_t(by) * width + 2 * bx + 1] =
                finish(v_w[0] * sums[0] + v_w[1] * sums[1] + v_w[2] * sums[2], 128, 18);
        }
    return out;
}

} // namespace framecl::reference
