#pragma once
// CPU reference for the epsilon filter, written from docs/filters.md, not from the
// kernels.

#include "reference_border.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace framecl::reference {

struct EpsilonParams {
    int radius = 4;
    int threshold = 20;
    Border border = Border::Replicate;
    uint8_t border_value = 0;
};

// The filtered pixel at (x, y): the mean of the pixels p of the (2 radius + 1)^2 window
// around it, borders applied, with |p - centre| <= threshold, rounded to nearest with
// halves up. The centre always counts, so the count is never 0.
inline uint8_t epsilonPixel(const uint8_t* plane, int width, int height, int stride, int x, int y,
                            const EpsilonParams& params)
{
    const int centre = plane[y * stride + x];
    int sum = 0;
    int count = 0;
    for (int dy = -params.radius; dy <= params.radius; ++dy) {
        for (int dx = -params.radius; dx <= params.radius; ++dx) {
            const int p = pixelAt(plane, width, height, stride, 1, x + dx, y + dy, 0, params.border,
                                  params.border_value);
            if (std::abs(p - centre) <= params.threshold) {
                sum += p;
                ++count;
            }
        }
    }
    const int whole = sum / count;
    const int remainder = sum % count;
    return uint8_t(2 * remainder >= count ? whole + 1 : whole);
}

// An R8 plane with `stride` bytes per row, filtered; the result packed (width bytes per
// row).
inline std::vector<uint8_t> epsilonPlane(const uint8_t* plane, int width, int height, int stride,
                                         const EpsilonParams& params)
{
    std::vector<uint8_t> filtered(size_t(width) * size_t(height));
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            filtered[size_t(y) * size_t(width) + size_t(x)] =
                epsilonPixel(plane, width, height, stride, x, y, params);
    return filtered;
}

} // namespace framecl::reference
