#pragma once
// CPU reference for bicubic scaling, written from docs/filters.md, not from the
// kernels, in double precision.
//
// Output pixel (X, Y) of an out_width x out_height frame samples the input at
// x = (X + 0.5) in_width / out_width (pixel centres at +0.5, guide §9.3.4), and y
// likewise. The guide's taps are columns x0 = floor(x - 1.5) .. x0 + 3 with the
// fraction t = frac(x - 0.5); their weights are Keys' cubic W of coefficient a at the
// taps' distances from the sample, 1 + t, t, 1 - t and 2 - t:
//
//   W(d) = (a + 2) |d|³ - (a + 3) |d|² + 1          for |d| <= 1
//   W(d) = a |d|³ - 5a |d|² + 8a |d| - 4a           for 1 < |d| < 2
//
// Each channel is the sum over the 4x4 taps of W(column distance) W(row distance)
// pixel, taps outside the input given by the border rule (reference_border.hpp),
// rounded to nearest with halves up and saturated to 0..255.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "reference_border.hpp"

namespace framecl::reference {

struct BicubicParams {
    int width = 1; // the output's size
    int height = 1;
    double a = -0.5;
    Border border = Border::Replicate;
    uint8_t border_value = 0;
};

// Keys' cubic of coefficient a at distance d.
inline double keys(double d, double a)
{
    d = std::fabs(d);
    if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
    if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
    return 0;
}

// The four taps of one output coordinate along an axis: the input index each stands
// for under the border rule (nothing: the border value), and its weight.
struct AxisTaps {
    std::optional<int> index[4];
    double weight[4];
};

inline AxisTaps axisTaps(int o, int in_size, int out_size, double a, Border border)
{
    const double x = (o + 0.5) * in_size / out_size;
    const int x0 = int(std::floor(x - 1.5));
    const double t = (x - 0.5) - std::floor(x - 0.5);
    const double distances[4] = {1 + t, t, 1 - t, 2 - t};
    AxisTaps taps;
    for (int i = 0; i < 4; ++i) {
        taps.index[i] = borderIndex(x0 + i, in_size, border);
        taps.weight[i] = keys(distances[i], a);
    }
    return taps;
}

// `plane` (packed, `channels` interleaved 8-bit channels: 1 for R8, 4 for ABGR8888,
// each filtered on its own) of in_width x in_height scaled to p.width x p.height.
inline std::vector<uint8_t> bicubicScale(const std::vector<uint8_t>& plane, int in_width,
                                         int in_height, int channels, const BicubicParams& p)
{
    // The taps of each output column and row: they do not depend on the other axis.
    std::vector<AxisTaps> columns, rows;
    for (int x = 0; x < p.width; ++x)
        columns.push_back(axisTaps(x, in_width, p.width, p.a, p.border));
    for (int y = 0; y < p.height; ++y)
        rows.push_back(axisTaps(y, in_height, p.height, p.a, p.border));

    std::vector<uint8_t> out(size_t(p.width) * p.height * channels);
    for (int y = 0; y < p.height; ++y) {
        const AxisTaps& ty = rows[size_t(y)];
        for (int x = 0; x < p.width; ++x) {
            const AxisTaps& tx = columns[size_t(x)];
            for (int c = 0; c < channels; ++c) {
                double sum = 0;
                for (int j = 0; j < 4; ++j)
                    for (int i = 0; i < 4; ++i) {
                        const double pixel =
                            ty.index[j] && tx.index[i]
                                ? plane[(size_t(*ty.index[j]) * in_width + size_t(*tx.index[i])) *
                                            channels +
                                        c]
                                : p.border_value;
                        sum += ty.weight[j] * tx.weight[i] * pixel;
                    }
                out[(size_t(y) * p.width + x) * channels + c] =
                    uint8_t(std::clamp(std::floor(sum + 0.5), 0.0, 255.0));
            }
        }
    }
    return out;
}

} // namespace framecl::reference
