#pragma once
// CPU reference for the `blockmatch` filter, written from docs/filters.md, not from the
// kernels: per block of the current R8 frame, the motion (dx, dy) in [-range, range]²
// whose cost, the sum over the block's pixels of m(cur(x, y) - prev(x - dx, y - dy)), is
// least; pixels of the previous frame outside the image by `border`.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <tuple>
#include <vector>

#include "reference_border.hpp"

namespace framecl::reference {

enum class BlockMetric { Sad, Ssd };

struct BlockMatchParams {
    int block;   // B, the side of a block: 4..32
    int range;   // R: dx and dy in [-R, R]
    BlockMetric metric;
    Border border; // the previous frame's pixels outside the image
    uint8_t border_value;
};

struct BlockMotion {
    int dx;
    int dy;
    uint32_t cost; // exact: an SSD of 32 x 32 pixels is below 2^32
};

// The cost every block of a frame with no previous frame reports: the largest the
// output's 16 bits hold.
inline constexpr uint32_t no_previous_cost = 65535;

// Sides of the output, one pixel per block: a block at the right or bottom edge is cut
// short, not left out.
inline int blockColumns(int width, int block)
{
    return (width + block - 1) / block;
}

inline int blockRows(int height, int block)
{
    return (height + block - 1) / block;
}

// The candidate (dx, dy)'s cost for block (bx, by) of `current`, against `previous`
// (R8 planes of `width` x `height` with their own strides).
inline uint32_t blockCost(const uint8_t* previous, int previous_stride, const uint8_t* current, int current_stride,
                          int width, int height, int bx, int by, int dx, int dy, const BlockMatchParams& params)
{
    uint32_t cost = 0;
    const int x_end = std::min(bx * params.block + params.block, width);
    const int y_end = std::min(by * params.block + params.block, height);
    for (int y = by * params.block; y < y_end; ++y)
        for (int x = bx * params.block; x < x_end; ++x) {
            const int d = int(current[y * current_stride + x]) -
                          int(pixelAt(previous, width, height, previous_stride, 1, x - dx, y - dy, 0, params.border,
                                      params.border_value));
            cost += uint32_t(params.metric == BlockMetric::Sad ? std::abs(d) : d * d);
        }
    return cost;
}

// The chosen candidate of block (bx, by): the least cost; of equal costs the least
// |dx| + |dy|, then the least dy, then the least dx.
inline BlockMotion matchBlock(const uint8_t* previous, int previous_stride, const uint8_t* current,
                              int current_stride, int width, int height, int bx, int by,
                              const BlockMatchParams& params)
{
    const auto key = [](const BlockMotion& m) {
        return std::tuple(m.cost, std::abs(m.dx) + std::abs(m.dy), m.dy, m.dx);
    };
    BlockMotion best{0, 0, UINT32_MAX}; // above every cost: the first candidate replaces it
    for (int dy = -params.range; dy <= params.range; ++dy)
        for (int dx = -params.range; dx <= params.range; ++dx) {
            const BlockMotion candidate{dx, dy, blockCost(previous, previous_stride, current, current_stride, width,
                                                          height, bx, by, dx, dy, params)};
            if (key(candidate) < key(best))
                best = candidate;
        }
    return best;
}

// The output frame, packed: ABGR8888 of blockColumns x blockRows pixels, each the bytes
// dx and dy (int8, two's complement) and min(cost, 65535) (uint16, little-endian).
// `previous` null: the session's first frame, every block (0, 0) at cost 65535.
inline std::vector<uint8_t> blockMatch(const uint8_t* previous, int previous_stride, const uint8_t* current,
                                       int current_stride, int width, int height, const BlockMatchParams& params)
{
    std::vector<uint8_t> result;
    for (int by = 0; by < blockRows(height, params.block); ++by)
        for (int bx = 0; bx < blockColumns(width, params.block); ++bx) {
            const BlockMotion motion = previous ? matchBlock(previous, previous_stride, current, current_stride,
                                                             width, height, bx, by, params)
                                                : BlockMotion{0, 0, no_previous_cost};
            const auto cost = uint16_t(std::min(motion.cost, no_previous_cost));
            result.push_back(uint8_t(int8_t(motion.dx)));
            result.push_back(uint8_t(int8_t(motion.dy)));
            result.push_back(uint8_t(cost & 0xff));
            result.push_back(uint8_t(cost >> 8));
        }
    return result;
}

} // namespace framecl::reference
