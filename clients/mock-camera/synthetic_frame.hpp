#pragma once
// The mock camera's picture: diagonal bars and a square that both move with the frame
// index, plus noise; or, with a motion, a fixed texture sliding by it every frame. Frame
// i depends only on (layout, i, seed, motion), so a test regenerates any frame the
// camera sent without replaying the ones before it.

#include <cstdint>
#include <span>

#include <framecl/format.h>

namespace framecl::mock_camera {

// Fills frame `index` into `bytes`, which holds one frame of `layout` (a valid R8, NV12
// or ABGR8888 layout; padding between rows is left alone). ABGR8888 pixels are R, G, B
// and A = 255. The noise comes from std::mt19937 seeded with (seed, index) through
// std::seed_seq, both specified exactly by the standard: the same bytes everywhere.
void generateFrame(const framecl_frame_layout& layout, uint64_t index, uint32_t seed, std::span<uint8_t> bytes);

// How far the texture slides each frame, in pixels.
struct Motion {
    int dx;
    int dy;
};

// Frame `index` of the sliding texture: pixel (x, y) shows texture point
// (x - index dx, y - index dy), so block matching against frame index - 1 finds (dx, dy)
// wherever the point was inside that frame. The texture is a hash of the point and
// `seed`, with no noise: each block matches exactly one place. Luma only: NV12's
// chroma is 128, and ABGR8888's R, G and B the luma.
void generateMovingFrame(const framecl_frame_layout& layout, uint64_t index, uint32_t seed, Motion motion,
                         std::span<uint8_t> bytes);

} // namespace framecl::mock_camera
