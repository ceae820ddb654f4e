#pragma once
// CPU reference for the box filter, written from docs/filters.md, not from the
// kernels: OpenCV's blur with normalize = true, its anchor at the box's centre
// (box_width/2, box_height/2), and halves rounded up.
//
// The window of output pixel (x, y) covers columns x - box_width/2 to
// x - box_width/2 + box_width - 1 and the rows likewise. The reference pads the image
// with its border once, so that every window lies inside the padded image, and sums
// windows from a summed-area table of the padded image: the result does not depend on
// how a window is walked.

#include <cstdint>
#include <vector>

#include "reference_border.hpp"

namespace framecl::reference {

struct BoxParams {
    int width = 3;
    int height = 3;
    Border border = Border::Replicate;
    uint8_t border_value = 0;
};

// The box mean of a packed plane of `channels` interleaved 8-bit channels (1 for R8,
// 4 for ABGR8888), each channel on its own.
inline std::vector<uint8_t> boxFilter(const std::vector<uint8_t>& plane, int width, int height, int channels,
                                      const BoxParams& box)
{
    const int left = box.width / 2;
    const int top = box.height / 2;
    const int padded_width = width + box.width - 1;
    const int padded_height = height + box.height - 1;
    const uint32_t count = uint32_t(box.width * box.height);
    std::vector<uint8_t> out(plane.size());
    for (int c = 0; c < channels; ++c) {
        // area[(py * (padded_width + 1)) + px]: the sum of the padded image's pixels
        // above row py and left of column px. Padded pixel (px, py) is image pixel
        // (px - left, py - top), borders applied.
        const int area_width = padded_width + 1;
        std::vector<uint32_t> area(size_t(area_width) * (padded_height + 1), 0);
        for (int py = 0; py < padded_height; ++py) {
            uint32_t row_sum = 0;
            for (int px = 0; px < padded_width; ++px) {
                row_sum += pixelAt(plane.data(), width, height, width * channels, channels, px - left, py - top, c,
                                   box.border, box.border_value);
                area[size_t(py + 1) * area_width + px + 1] = area[size_t(py) * area_width + px + 1] + row_sum;
            }
        }
        // Output pixel (x, y)'s window is padded pixels x..x+box.width-1, y..y+box.height-1.
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                const uint32_t sum = area[size_t(y + box.height) * area_width + x + box.width] -
                                     area[size_t(y) * area_width + x + box.width] -
                                     area[size_t(y + box.height) * area_width + x] + area[size_t(y) * area_width + x];
                const uint32_t whole = sum / count;
                const uint32_t remainder = sum % count;
                out[(size_t(y) * width + x) * channels + c] = uint8_t(2 * remainder >= count ? whole + 1 : whole);
            }
        }
    }
    return out;
}

} // namespace framecl::reference
