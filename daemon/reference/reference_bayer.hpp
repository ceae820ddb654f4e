#pragma once
// CPU references of the Bayer formats and the ISP's first stages, written from
// docs/filters.md ("Bayer formats", "bayer", "demosaic"): samples in each packing,
// black level and white-balance gains, bilinear and Malvar-He-Cutler demosaicing.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framecl/statistics.h"
#include "reference_border.hpp"

namespace framecl::reference {

enum class Packing { Bytes, Words, Mipi10, Mipi12 };

// A Bayer plane's samples, row by row, and its pattern: `order` names the colours of the
// top-left 2x2 block, row by row ("RGGB", "BGGR", "GRBG" or "GBRG").
struct BayerSamples {
    std::string order;
    uint32_t bits;
    uint32_t width, height;
    std::vector<uint16_t> samples;

    uint16_t at(int x, int y) const { return samples[size_t(y) * width + size_t(x)]; }
    uint32_t maxCode() const { return (1u << bits) - 1; }

    // 0 R, 1 G, 2 B at (x, y).
    int channel(int x, int y) const
    {
        const char colour = order[2 * (y & 1) + (x & 1)];
        return colour == 'R' ? 0 : colour == 'G' ? 1 : 2;
    }
};

// An RGBA8 image (4 bytes per pixel, rows packed) sampled through the pattern: each
// sample keeps its colour's value, scaled from 8 bits to `bits` and rounded.
inline BayerSamples mosaic(const std::vector<uint8_t>& rgba, uint32_t width, uint32_t height, const std::string& order,
                           uint32_t bits)
{
    BayerSamples out{order, bits, width, height, std::vector<uint16_t>(size_t(width) * height)};
    const uint32_t max_code = out.maxCode();
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            const uint32_t v = rgba[(size_t(y) * width + x) * 4 + size_t(out.channel(int(x), int(y)))];
            out.samples[size_t(y) * width + x] = uint16_t((v * max_code + 127) / 255);
        }
    return out;
}

// Bytes of one row of `width` samples in `packing`.
inline size_t packedRowBytes(Packing packing, uint32_t width)
{
    switch (packing) {
    case Packing::Bytes:
        return width;
    case Packing::Words:
        return 2 * size_t(width);
    case Packing::Mipi10:
        return size_t(width) / 4 * 5;
    case Packing::Mipi12:
        return size_t(width) / 2 * 3;
    }
    return 0;
}

// Writes row y of `samples` at `row` in `packing`: MIPI RAW10 puts 4 samples in 5 bytes
// (the high 8 bits of each, then a byte of their low 2 bits, sample i's at bit 2i); RAW12
// 2 in 3 (the high 8 bits of each, then a byte with the first's low 4 bits below the
// second's); words are little-endian.
inline void packRow(const BayerSamples& samples, uint32_t y, Packing packing, uint8_t* row)
{
    for (uint32_t x = 0; x < samples.width; ++x) {
        const uint32_t v = samples.at(int(x), int(y));
        switch (packing) {
        case Packing::Bytes:
            row[x] = uint8_t(v);
            break;
        case Packing::Words:
            row[2 * x] = uint8_t(v);
            row[2 * x + 1] = uint8_t(v >> 8);
            break;
        case Packing::Mipi10: {
            uint8_t* group = row + x / 4 * 5;
            const uint32_t i = x % 4;
            group[i] = uint8_t(v >> 2);
            group[4] = uint8_t((group[4] & ~(3u << (2 * i))) | (v & 3u) << (2 * i));
            break;
        }
        case Packing::Mipi12: {
            uint8_t* group = row + x / 2 * 3;
            const uint32_t i = x % 2;
            group[i] = uint8_t(v >> 4);
            group[2] = uint8_t((group[2] & ~(15u << (4 * i))) | (v & 15u) << (4 * i));
            break;
        }
        }
    }
}

// The samples of `height` rows of `width` at `bytes` with `stride`, in `packing` (the
// inverse of packRow). Bits of a word above `bits` are ignored.
inline BayerSamples unpack(const uint8_t* bytes, size_t stride, Packing packing, const std::string& order,
                           uint32_t bits, uint32_t width, uint32_t height)
{
    BayerSamples out{order, bits, width, height, std::vector<uint16_t>(size_t(width) * height)};
    for (uint32_t y = 0; y < height; ++y) {
        const uint8_t* row = bytes + y * stride;
        for (uint32_t x = 0; x < width; ++x) {
            uint32_t v = 0;
            switch (packing) {
            case Packing::Bytes:
                v = row[x];
                break;
            case Packing::Words:
                v = (row[2 * x] | uint32_t(row[2 * x + 1]) << 8) & out.maxCode();
                break;
            case Packing::Mipi10: {
                const uint8_t* group = row + x / 4 * 5;
                v = uint32_t(group[x % 4]) << 2 | (group[4] >> (2 * (x % 4)) & 3u);
                break;
            }
            case Packing::Mipi12: {
                const uint8_t* group = row + x / 2 * 3;
                v = uint32_t(group[x % 2]) << 4 | (group[2] >> (4 * (x % 2)) & 15u);
                break;
            }
            }
            out.samples[size_t(y) * width + x] = uint16_t(v);
        }
    }
    return out;
}

// The `bayer` stage: each sample v of colour c becomes
// min(M, (max(v - black, 0) * f_c + 2^13) >> 14), f_c = round(gain_c * M / (M - black) * 2^14).
inline BayerSamples levels(const BayerSamples& in, uint32_t black, const double (&gains)[3])
{
    BayerSamples out = in;
    const double max_code = in.maxCode();
    uint32_t factors[3];
    for (int c = 0; c < 3; ++c)
        factors[c] = uint32_t(std::lround(gains[c] * max_code / (max_code - black) * 16384.0));
    for (uint32_t y = 0; y < in.height; ++y)
        for (uint32_t x = 0; x < in.width; ++x) {
            const uint32_t v = in.at(int(x), int(y));
            const uint32_t above = v > black ? v - black : 0;
            const uint32_t scaled = (above * factors[in.channel(int(x), int(y))] + 8192) >> 14;
            out.samples[size_t(y) * in.width + x] = uint16_t(std::min(scaled, in.maxCode()));
        }
    return out;
}

// The frame's statistics (docs/filters.md, "Statistics"), from the input's samples
// before the stage's levels: 2x2 block (j, k) lies in zone (16 j / (width / 2),
// 12 k / (height / 2)); each sample v below min(saturation, M) adds max(v - black, 0) to
// its colour's sum in that zone and 1 to its count; each block adds 1 to bin
// (77 r + 75 (g1 + g2) + 29 b) >> bits of the histogram, on the same values.
inline framecl_statistics statistics(const BayerSamples& in, uint32_t black, uint32_t saturation)
{
    framecl_statistics out{};
    const uint32_t limit = std::min(saturation, in.maxCode());
    const uint32_t weights[3] = {77, 75, 29};
    for (uint32_t k = 0; k < in.height / 2; ++k)
        for (uint32_t j = 0; j < in.width / 2; ++j) {
            const uint32_t zx = j * FRAMECL_STATISTICS_ZONES_X / (in.width / 2);
            const uint32_t zy = k * FRAMECL_STATISTICS_ZONES_Y / (in.height / 2);
            uint32_t luma = 0;
            for (uint32_t p = 0; p < 4; ++p) {
                const int x = int(2 * j + p % 2), y = int(2 * k + p / 2);
                const int c = in.channel(x, y);
                const uint32_t v = in.at(x, y);
                const uint32_t above = v > black ? v - black : 0;
                luma += weights[c] * above;
                if (v < limit) {
                    out.sums[zy][zx][c] += above;
                    ++out.counts[zy][zx][c];
                }
            }
            ++out.histogram[luma >> in.bits];
        }
    return out;
}

enum class Demosaic { Bilinear, Mhc };

// RGBA16 pixels (4 values per pixel, rows packed): each channel of `bits` widened to 16
// by repeating its high bits, alpha 65535.
inline std::vector<uint16_t> demosaic(const BayerSamples& in, Demosaic method)
{
    const int w = int(in.width), h = int(in.height);
    const auto S = [&](int x, int y) {
        return int(in.at(*borderIndex(x, w, Border::Reflect101), *borderIndex(y, h, Border::Reflect101)));
    };
    const auto widen = [&](int c) {
        return uint16_t(uint32_t(c) << (16 - in.bits) | uint32_t(c) >> (2 * in.bits - 16));
    };
    std::vector<uint16_t> out(size_t(w) * h * 4);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const int site = in.channel(x, y);
            // At a G site, the colour of the horizontal neighbours and of the vertical ones.
            const int across = in.channel(x + 1, y), down = in.channel(x, y + 1);
            int rgb[3];
            rgb[site] = S(x, y);
            const int cross = S(x - 1, y) + S(x + 1, y) + S(x, y - 1) + S(x, y + 1);
            const int diagonals = S(x - 1, y - 1) + S(x + 1, y - 1) + S(x - 1, y + 1) + S(x + 1, y + 1);
            const int horizontal = S(x - 1, y) + S(x + 1, y), vertical = S(x, y - 1) + S(x, y + 1);
            if (method == Demosaic::Bilinear) {
                if (site != 1) {
                    rgb[1] = (cross + 2) >> 2;
                    rgb[2 - site] = (diagonals + 2) >> 2;
                } else {
                    rgb[across] = (horizontal + 1) >> 1;
                    rgb[down] = (vertical + 1) >> 1;
                }
            } else {
                // Malvar-He-Cutler's filters, weights times 16 (the paper's are in eighths).
                const int far_h = S(x - 2, y) + S(x + 2, y), far_v = S(x, y - 2) + S(x, y + 2);
                const int centre = S(x, y);
                const auto finish = [&](int sum) { return std::clamp((sum + 8) >> 4, 0, int(in.maxCode())); };
                if (site != 1) {
                    rgb[1] = finish(8 * centre + 4 * cross - 2 * (far_h + far_v));
                    rgb[2 - site] = finish(12 * centre + 4 * diagonals - 3 * (far_h + far_v));
                } else {
                    rgb[across] = finish(10 * centre + 8 * horizontal - 2 * diagonals - 2 * far_h + far_v);
                    rgb[down] = finish(10 * centre + 8 * vertical - 2 * diagonals - 2 * far_v + far_h);
                }
            }
            uint16_t* pixel = &out[(size_t(y) * w + x) * 4];
            for (int c = 0; c < 3; ++c)
                pixel[c] = widen(rgb[c]);
            pixel[3] = 65535;
        }
    return out;
}

} // namespace framecl::reference
