#include "synthetic_frame.hpp"

#include <algorithm>
#include <random>

namespace framecl::mock_camera {
namespace {

// Moves with the frame index so that consecutive frames differ everywhere: bars 16
// pixels wide shift 3 pixels a frame, the square 7 right and 4 down, wrapping.
class Pattern {
public:
    Pattern(uint32_t width, uint32_t height, uint64_t index)
        : index_(index), side_(std::max(4u, std::min(width, height) / 5))
    {
        square_x_ = width > side_ ? uint32_t(index * 7 % (width - side_ + 1)) : 0;
        square_y_ = height > side_ ? uint32_t(index * 4 % (height - side_ + 1)) : 0;
    }

    bool inSquare(uint32_t x, uint32_t y) const
    {
        return x >= square_x_ && x < square_x_ + side_ && y >= square_y_ && y < square_y_ + side_;
    }

    // Grey level of a pixel before noise.
    uint8_t luma(uint32_t x, uint32_t y) const
    {
        if (inSquare(x, y))
            return 235;
        return (x + y + 3 * index_) / 16 % 2 ? 180 : 50;
    }

private:
    uint64_t index_;
    uint32_t side_;
    uint32_t square_x_;
    uint32_t square_y_;
};

// Noise in [-8, 7], four values from each 32-bit draw of the engine. Taking bits from
// the engine directly, not through a distribution, keeps the values the same across
// standard libraries (distributions are implementation-defined).
class Noise {
public:
    Noise(uint32_t seed, uint64_t index)
    {
        std::seed_seq sequence{seed, uint32_t(index), uint32_t(index >> 32)};
        engine_.seed(sequence);
    }

    uint8_t add(uint8_t value)
    {
        if (left_ == 0) {
            bits_ = uint32_t(engine_());
            left_ = 4;
        }
        const int noise = int(bits_ & 15) - 8;
        bits_ >>= 8;
        --left_;
        return uint8_t(std::clamp(int(value) + noise, 0, 255));
    }

private:
    std::mt19937 engine_;
    uint32_t bits_ = 0;
    int left_ = 0;
};

uint8_t* row(std::span<uint8_t> bytes, const framecl_plane& plane, uint32_t y)
{
    return bytes.data() + plane.offset + uint64_t(y) * plane.stride;
}

// The sliding texture at point (u, v): a 32-bit integer hash (Chris Wellons' lowbias32)
// of the point, so that no two blocks look alike.
uint8_t texture(int64_t u, int64_t v, uint32_t seed)
{
    uint32_t h = uint32_t(u) * 0x9E3779B1u ^ uint32_t(v) * 0x85EBCA77u ^ seed;
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return uint8_t(h);
}

} // namespace

void generateFrame(const framecl_frame_layout& layout, uint64_t index, uint32_t seed, std::span<uint8_t> bytes)
{
    const Pattern pattern(layout.width, layout.height, index);
    Noise noise(seed, index);
    const framecl_plane& first = layout.planes[0];
    switch (layout.fourcc) {
    case DRM_FORMAT_R8:
        for (uint32_t y = 0; y < layout.height; ++y) {
            uint8_t* pixel = row(bytes, first, y);
            for (uint32_t x = 0; x < layout.width; ++x)
                pixel[x] = noise.add(pattern.luma(x, y));
        }
        break;
    case DRM_FORMAT_ABGR8888:
        for (uint32_t y = 0; y < layout.height; ++y) {
            uint8_t* pixel = row(bytes, first, y);
            for (uint32_t x = 0; x < layout.width; ++x, pixel += 4) {
                const uint8_t luma = pattern.luma(x, y);
                pixel[0] = noise.add(luma);
                pixel[1] = noise.add(uint8_t(255 - luma));
                pixel[2] = uint8_t(x + 2 * index);
                pixel[3] = 255;
            }
        }
        break;
    case DRM_FORMAT_NV12:
        for (uint32_t y = 0; y < layout.height; ++y) {
            uint8_t* pixel = row(bytes, first, y);
            for (uint32_t x = 0; x < layout.width; ++x)
                pixel[x] = noise.add(pattern.luma(x, y));
        }
        // One U, V pair per 2x2 block: a reddish square on a background whose hue
        // changes across the frame and with time.
        for (uint32_t y = 0; y < layout.height / 2; ++y) {
            uint8_t* pair = row(bytes, layout.planes[1], y);
            for (uint32_t x = 0; x < layout.width / 2; ++x, pair += 2) {
                const bool square = pattern.inSquare(2 * x, 2 * y);
                pair[0] = square ? 90 : uint8_t(96 + (x + index) % 64);
                pair[1] = square ? 200 : uint8_t(96 + y % 64);
            }
        }
        break;
    }
}

void generateMovingFrame(const framecl_frame_layout& layout, uint64_t index, uint32_t seed, Motion motion,
                         std::span<uint8_t> bytes)
{
    const int64_t shift_x = int64_t(index) * motion.dx, shift_y = int64_t(index) * motion.dy;
    const uint32_t channels = layout.fourcc == DRM_FORMAT_ABGR8888 ? 4 : 1;
    for (uint32_t y = 0; y < layout.height; ++y) {
        uint8_t* pixel = row(bytes, layout.planes[0], y);
        for (uint32_t x = 0; x < layout.width; ++x, pixel += channels) {
            const uint8_t luma = texture(x - shift_x, y - shift_y, seed);
            for (uint32_t c = 0; c < channels; ++c)
                pixel[c] = c == 3 ? 255 : luma;
        }
    }
    if (layout.fourcc == DRM_FORMAT_NV12)
        for (uint32_t y = 0; y < layout.height / 2; ++y)
            std::fill_n(row(bytes, layout.planes[1], y), layout.width, uint8_t(128));
}

} // namespace framecl::mock_camera
