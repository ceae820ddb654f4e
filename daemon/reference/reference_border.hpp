#pragma once
// Pixels outside an image, as the neighbourhood filters' `border` parameter defines
// them (docs/filters.md), for the CPU references. Written from OpenCV's definitions:
// replicate = BORDER_REPLICATE (aaa|abcd|ddd), reflect101 = BORDER_REFLECT_101
// (cb|abcd|cb), constant = BORDER_CONSTANT (the border value everywhere outside).

#include <cstdint>
#include <optional>

namespace framecl::reference {

enum class Border { Replicate, Reflect101, Constant };

// The index inside [0, size) that stands for `i`, or nothing for a constant border
// (the caller then uses the border value).
inline std::optional<int> borderIndex(int i, int size, Border border)
{
    if (i >= 0 && i < size)
        return i;
    if (border == Border::Constant)
        return std::nullopt;
    if (border == Border::Replicate)
        return i < 0 ? 0 : size - 1;
    if (size == 1)
        return 0;
    // Reflect101 about the edge pixels, repeatedly for windows wider than the image.
    const int period = 2 * (size - 1);
    int m = i % period;
    if (m < 0)
        m += period;
    return m < size ? m : period - m;
}

// One channel of a pixel of an 8-bit plane with `stride` bytes per row and
// `channels` interleaved channels, borders applied.
inline uint8_t pixelAt(const uint8_t* plane, int width, int height, int stride, int channels, int x, int y,
                       int channel, Border border, uint8_t border_value)
{
    const auto bx = borderIndex(x, width, border);
    const auto by = borderIndex(y, height, border);
    if (!bx || !by)
        return border_value;
    return plane[*by * stride + *bx * channels + channel];
}

} // namespace framecl::reference
