#pragma once
// CPU reference for the `meanshift` filter, written from docs/filters.md, not from the
// kernels: OpenCV's pyrMeanShiftFiltering with maxLevel = 0 on the R, G and B of an
// ABGR8888 frame, means rounded to nearest with halves to even, alpha copied.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace framecl::reference {

struct MeanShiftParams {
    int sp = 5;       // spatial radius
    double sr = 6;    // colour radius
    int max_iter = 5; // the most shifts per pixel
    double eps = 1;   // the stop bound
};

// What the filter gives for a frame, and for each pixel how many windows it summed
// (1 to max_iter), so that a test can see that its frames make pixels shift more than
// once.
struct MeanShiftResult {
    std::vector<uint8_t> abgr; // packed, 4 bytes per pixel
    std::vector<int> windows;  // one per pixel, row by row
};

// s / n rounded to nearest, halves to even (s >= 0, n > 0).
inline int roundHalfToEven(long s, long n)
{
    const long q = s / n, r = s % n;
    if (2 * r > n || (2 * r == n && q % 2 == 1))
        return int(q + 1);
    return int(q);
}

// The filter on an ABGR8888 plane of `stride` bytes per row (bytes R, G, B, A).
inline MeanShiftResult meanShiftPlane(const uint8_t* plane, int width, int height, int stride,
                                      const MeanShiftParams& params)
{
    // OpenCV's isr2 = cvRound(sr²), round half to even in double.
    const long sr2 = std::lrint(params.sr * params.sr);
    const auto at = [&](int x, int y, int c) { return int(plane[long(y) * stride + 4 * x + c]); };

    MeanShiftResult result{std::vector<uint8_t>(size_t(width) * height * 4),
                           std::vector<int>(size_t(width) * height)};
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            int px = x, py = y; // the current position
            int colour[3] = {at(x, y, 0), at(x, y, 1), at(x, y, 2)};
            int windows = 0;
            for (int iter = 0; iter < params.max_iter; ++iter) {
                ++windows;
                // The window around the position, clipped to the image.
                const int minx = std::max(px - params.sp, 0);
                const int maxx = std::min(px + params.sp, width - 1);
                const int miny = std::max(py - params.sp, 0);
                const int maxy = std::min(py + params.sp, height - 1);
                long count = 0, sx = 0, sy = 0, sum[3] = {0, 0, 0};
                for (int j = miny; j <= maxy; ++j)
                    for (int i = minx; i <= maxx; ++i) {
                        long distance2 = 0;
                        for (int c = 0; c < 3; ++c)
                            distance2 += long(at(i, j, c) - colour[c]) * (at(i, j, c) - colour[c]);
                        if (distance2 > sr2)
                            continue;
                        ++count;
                        sx += i;
                        sy += j;
                        for (int c = 0; c < 3; ++c)
                            sum[c] += at(i, j, c);
                    }
                if (count == 0)
                    break; // position and colour stay
                const int nx = roundHalfToEven(sx, count), ny = roundHalfToEven(sy, count);
                int next[3];
                long change2 = 0;
                for (int c = 0; c < 3; ++c) {
                    next[c] = roundHalfToEven(sum[c], count);
                    change2 += long(next[c] - colour[c]) * (next[c] - colour[c]);
                }
                const int moved = std::abs(nx - px) + std::abs(ny - py);
                const bool stop = moved == 0 || double(moved + change2) <= params.eps;
                px = nx;
                py = ny;
                for (int c = 0; c < 3; ++c)
                    colour[c] = next[c];
                if (stop)
                    break;
            }
            uint8_t* out = &result.abgr[(size_t(y) * width + x) * 4];
            for (int c = 0; c < 3; ++c)
                out[c] = uint8_t(colour[c]);
            out[3] = uint8_t(at(x, y, 3));
            result.windows[size_t(y) * width + x] = windows;
        }
    }
    return result;
}

// Frames on which pixels shift several times: flat rectangles of random colours
// painted over each other, each channel then moved by up to ±noise. The windows near
// a region's edge take only its side, so their means move away from the edge, shift
// after shift. R, G and B of each pixel, row by row; alpha is the caller's.
inline std::vector<uint8_t> noisyRegions(uint32_t width, uint32_t height, std::mt19937& random, int noise)
{
    const auto below = [&](uint32_t n) { return uint32_t(random() % n); };
    std::vector<uint8_t> rgb(size_t(width) * height * 3, 128);
    for (int r = 0; r < 24; ++r) {
        const uint32_t x0 = below(width), y0 = below(height);
        const uint32_t x1 = std::min(width, x0 + 1 + below(width / 2 + 1));
        const uint32_t y1 = std::min(height, y0 + 1 + below(height / 2 + 1));
        const uint8_t colour[3] = {uint8_t(random()), uint8_t(random()), uint8_t(random())};
        for (uint32_t y = y0; y < y1; ++y)
            for (uint32_t x = x0; x < x1; ++x)
                std::copy(colour, colour + 3, &rgb[(size_t(y) * width + x) * 3]);
    }
    for (uint8_t& value : rgb)
        value = uint8_t(std::clamp(int(value) + int(below(2 * noise + 1)) - noise, 0, 255));
    return rgb;
}

} // namespace framecl::reference
