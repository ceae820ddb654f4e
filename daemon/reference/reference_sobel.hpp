#pragma once
// CPU reference for the `sobel` filter, written from docs/filters.md, not from the
// kernels: gx and gy of OpenCV's Sobel with ksize = 3 (correlation with
// [-1 0 1; -2 0 2; -1 0 1] and its transpose), pixels outside the image by `border`.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "reference_border.hpp"

namespace framecl::reference {

enum class SobelOutput { Gx, Gy, MagnitudeL1, MagnitudeL2 };

struct SobelGradient {
    int gx;
    int gy;
};

// The gradients at (x, y) of an R8 plane with `stride` bytes per row.
inline SobelGradient sobelAt(const uint8_t* plane, int width, int height, int stride, int x, int y,
                             Border border, uint8_t border_value)
{
    const auto p = [&](int dx, int dy) {
        return int(
            pixelAt(plane, width, height, stride, 1, x + dx, y + dy, 0, border, border_value));
    };
    const int gx = -p(-1, -1) + p(1, -1) - 2 * p(-1, 0) + 2 * p(1, 0) - p(-1, 1) + p(1, 1);
    const int gy = -p(-1, -1) - 2 * p(0, -1) - p(1, -1) + p(-1, 1) + 2 * p(0, 1) + p(1, 1);
    return {gx, gy};
}

// min(|gx| + |gy|, 255).
inline uint8_t sobelL1(SobelGradient g)
{
    return uint8_t(std::min(std::abs(g.gx) + std::abs(g.gy), 255));
}

// round(sqrt(gx² + gy²)), halves up, saturated to 255. The square root of an integer
// below 2^53 is correctly rounded in double, far from the halves that never occur.
inline uint8_t sobelL2(SobelGradient g)
{
    const double root = std::sqrt(double(g.gx * g.gx + g.gy * g.gy));
    return uint8_t(std::min(std::floor(root + 0.5), 255.0));
}

// The output plane, packed: R16 (two bytes per pixel, little-endian, two's complement)
// for gx and gy, R8 for the magnitudes.
inline std::vector<uint8_t> sobelPlane(const uint8_t* plane, int width, int height, int stride,
                                       SobelOutput output, Border border, uint8_t border_value)
{
    std::vector<uint8_t> result;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const SobelGradient g =
                sobelAt(plane, width, height, stride, x, y, border, border_value);
            switch (output) {
            case SobelOutput::Gx:
            case SobelOutput::Gy: {
                const auto value = uint16_t(int16_t(output == SobelOutput::Gx ? g.gx : g.gy));
                result.push_back(uint8_t(value & 0xff));
                result.push_back(uint8_t(value >> 8));
                break;
            }
            case SobelOutput::MagnitudeL1:
                result.push_back(sobelL1(g));
                break;
            case SobelOutput::MagnitudeL2:
                result.push_back(sobelL2(g));
                break;
            }
        }
    }
    return result;
}

} // namespace framecl::reference
