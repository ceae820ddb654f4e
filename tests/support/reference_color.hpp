#pragma once
// CPU reference for the colour conversions, written from docs/filters.md, not from
// the kernels.

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

} // namespace framecl::test
