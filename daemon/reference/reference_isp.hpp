#pragma once
// CPU references of the ISP's stages on linear RGB, written from docs/filters.md: a
// colour-correction matrix with offsets on ABGR16161616, a tone curve from it to
// ABGR8888, sRGB's or a table's; and the shipped camera-isp pipeline's stages chained.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference_bayer.hpp"

namespace framecl::reference {

// `rgba16`: 4 values per pixel. Weights and offsets in units of 2^-12, rounded; each
// channel floor((sum + 2^11) / 2^12) clamped to 0..65535; alpha kept.
inline std::vector<uint16_t> colourCorrect(const std::vector<uint16_t>& rgba16, const double (&matrix)[9],
                                           const double (&offsets)[3])
{
    int64_t m[9], o[3];
    for (int i = 0; i < 9; ++i)
        m[i] = std::llround(matrix[i] * 4096);
    for (int c = 0; c < 3; ++c)
        o[c] = std::llround(offsets[c] * 4096);
    std::vector<uint16_t> out(rgba16.size());
    for (size_t p = 0; p < rgba16.size(); p += 4) {
        for (int c = 0; c < 3; ++c) {
            const int64_t sum = m[3 * c] * rgba16[p] + m[3 * c + 1] * rgba16[p + 1] + m[3 * c + 2] * rgba16[p + 2] +
                                o[c] + 2048;
            const int64_t floored = sum >= 0 ? sum / 4096 : -((-sum + 4095) / 4096);
            out[p + size_t(c)] = uint16_t(std::clamp<int64_t>(floored, 0, 65535));
        }
        out[p + 3] = rgba16[p + 3];
    }
    return out;
}

// The tone curve's points as 16-bit outputs: `lut` rounded (x 65535), or, with `lut`
// empty, the sRGB transfer function at 4096 inputs evenly spaced over [0, 1].
inline std::vector<uint32_t> toneCurvePoints(const std::vector<double>& lut)
{
    std::vector<uint32_t> points;
    if (!lut.empty()) {
        for (double v : lut)
            points.push_back(uint32_t(std::lround(v * 65535)));
        return points;
    }
    for (int i = 0; i < 4096; ++i) {
        const double x = i / 4095.0;
        const double encoded = x <= 0.0031308 ? 12.92 * x : 1.055 * std::pow(x, 1 / 2.4) - 0.055;
        points.push_back(uint32_t(std::lround(encoded * 65535)));
    }
    return points;
}

// `rgba16` through the curve of `points` to RGBA8: each channel interpolated between the
// two points around it, rounded half up to 16 bits, then to 8; alpha only to 8 bits.
inline std::vector<uint8_t> toneMap(const std::vector<uint16_t>& rgba16, const std::vector<uint32_t>& points)
{
    const uint64_t n = points.size();
    const auto to8 = [](uint64_t w) { return uint8_t((w * 255 + 32767) / 65535); };
    std::vector<uint8_t> out(rgba16.size());
    for (size_t i = 0; i < rgba16.size(); ++i) {
        if (i % 4 == 3) {
            out[i] = to8(rgba16[i]);
            continue;
        }
        const uint64_t t = rgba16[i] * (n - 1);
        const uint64_t k = t / 65535, f = t % 65535;
        const uint64_t w = (points[k] * (65535 - f) + points[std::min(k + 1, n - 1)] * f + 32767) / 65535;
        out[i] = to8(w);
    }
    return out;
}

// The shipped camera-isp-rgb pipeline (config/pipelines.d/camera-isp.toml: black level 0,
// gains of 1, MHC, the identity matrix, sRGB) on `raw`: RGBA8, 4 bytes a pixel.
inline std::vector<uint8_t> shippedCameraIspRgb(const BayerSamples& raw)
{
    const double unit_gains[3] = {1, 1, 1};
    const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double no_offsets[3] = {0, 0, 0};
    return toneMap(colourCorrect(demosaic(levels(raw, 0, unit_gains), Demosaic::Mhc), identity, no_offsets),
                   toneCurvePoints({}));
}

} // namespace framecl::reference
