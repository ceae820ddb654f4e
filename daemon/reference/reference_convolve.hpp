#pragma once
// CPU reference for the `convolve` filter, written from docs/filters.md, not from the
// kernels: OpenCV's filter2D (a correlation, the kernel not flipped) with its default
// anchor (kernel_width/2, kernel_height/2), then scale, delta, rounding to nearest with
// ties to even (OpenCV's saturate_cast) and saturation to 0..255. A separable pair
// (sepFilter2D) is the 2D kernel of its outer product, w[j][i] = kernel_y[j] kernel_x[i].
// Everything in double.

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference_border.hpp"

namespace framecl::reference {

struct ConvolveParams {
    int kernel_width = 1;
    int kernel_height = 1;
    std::vector<double> weights{1.0}; // kernel_height rows of kernel_width, row-major
    double scale = 1;
    double delta = 0;
    Border border = Border::Replicate;
    uint8_t border_value = 0;
};

// The 2D kernel of a separable pair: kernel_x's taps across, kernel_y's down.
inline ConvolveParams outerProduct(const std::vector<double>& kernel_x, const std::vector<double>& kernel_y)
{
    ConvolveParams params;
    params.kernel_width = int(kernel_x.size());
    params.kernel_height = int(kernel_y.size());
    params.weights.clear();
    for (double y : kernel_y)
        for (double x : kernel_x)
            params.weights.push_back(y * x);
    return params;
}

// saturate(round(v)): to nearest, ties to even (std::nearbyint in the default rounding
// mode), then clamped to 0..255.
inline uint8_t saturateRound(double v)
{
    const double rounded = std::nearbyint(v);
    return uint8_t(rounded <= 0 ? 0 : rounded >= 255 ? 255 : rounded);
}

// The filtered packed R8 plane of `width` x `height` pixels.
inline std::vector<uint8_t> convolve(const std::vector<uint8_t>& plane, int width, int height,
                                     const ConvolveParams& params)
{
    const int left = params.kernel_width / 2;
    const int top = params.kernel_height / 2;
    std::vector<uint8_t> out(plane.size());
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            double sum = 0;
            for (int j = 0; j < params.kernel_height; ++j)
                for (int i = 0; i < params.kernel_width; ++i)
                    sum += params.weights[size_t(j * params.kernel_width + i)] *
                           pixelAt(plane.data(), width, height, width, 1, x - left + i, y - top + j, 0, params.border,
                                   params.border_value);
            out[size_t(y) * width + x] = saturateRound(params.scale * sum + params.delta);
        }
    }
    return out;
}

} // namespace framecl::reference
