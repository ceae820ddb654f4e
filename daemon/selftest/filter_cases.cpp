// The filter checks of framecld --self-test (selftest/filter_cases.hpp): for each shipped
// filter plugin, one case or two where it has distinct modes, each with a plugin test's
// parameters, input format, content and tolerance (tests/unit/filters), on frames small
// enough that every variant of every case runs in a few seconds on a CPU device.
#include "selftest/filter_cases.hpp"

#include <algorithm>
#include <charconv>
#include <random>
#include <span>

#include <linux/videodev2.h>

#include "framecl/format.h"
#include "reference/reference_bayer.hpp"
#include "reference/reference_bicubic.hpp"
#include "reference/reference_blockmatch.hpp"
#include "reference/reference_box.hpp"
#include "reference/reference_color.hpp"
#include "reference/reference_convolve.hpp"
#include "reference/reference_epsilon.hpp"
#include "reference/reference_isp.hpp"
#include "reference/reference_meanshift.hpp"
#include "reference/reference_sobel.hpp"

namespace framecl::selftest {
namespace {

using reference::Border;

// `size` bytes of noise: every value of every channel.
PackedFrame randomFrame(size_t size, uint32_t seed)
{
    std::mt19937 random(seed);
    PackedFrame frame(size);
    for (auto& byte : frame)
        byte = uint8_t(random());
    return frame;
}

// A double as TOML reads it back exactly: the shortest text that does.
std::string tomlNumber(double value)
{
    char text[32];
    return {text, std::to_chars(text, text + sizeof text, value).ptr};
}

std::string tomlList(std::span<const double> values)
{
    std::string list = "[";
    for (size_t i = 0; i < values.size(); ++i)
        list += (i ? ", " : "") + tomlNumber(values[i]);
    return list + "]";
}

// An ABGR16161616 plane's values, little-endian 16-bit words, and back.
std::vector<uint16_t> words(const PackedFrame& frame)
{
    std::vector<uint16_t> values(frame.size() / 2);
    for (size_t i = 0; i < values.size(); ++i)
        values[i] = uint16_t(frame[2 * i] | frame[2 * i + 1] << 8);
    return values;
}

PackedFrame wordBytes(const std::vector<uint16_t>& values)
{
    PackedFrame frame(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
        frame[2 * i] = uint8_t(values[i]);
        frame[2 * i + 1] = uint8_t(values[i] >> 8);
    }
    return frame;
}

// Bayer samples of `bits` at random, every code from 0 to the largest.
reference::BayerSamples randomSamples(const char* order, uint32_t bits, uint32_t width, uint32_t height, uint32_t seed)
{
    reference::BayerSamples samples{order, bits, width, height, std::vector<uint16_t>(size_t(width) * height)};
    std::mt19937 random(seed);
    for (auto& sample : samples.samples)
        sample = uint16_t(random() & samples.maxCode());
    return samples;
}

PackedFrame packedSamples(const reference::BayerSamples& samples, reference::Packing packing)
{
    const size_t row_bytes = reference::packedRowBytes(packing, samples.width);
    PackedFrame frame(row_bytes * samples.height);
    for (uint32_t y = 0; y < samples.height; ++y)
        reference::packRow(samples, y, packing, frame.data() + y * row_bytes);
    return frame;
}

// MIPI RAW10 unpacked to words with a black level and white-balance gains that differ
// per colour, so that a sample taking another colour's factor shows.
FilterCase bayerCase()
{
    static constexpr uint32_t width = 60, height = 34; // RAW10 packs 4 samples in 5 bytes
    static constexpr double gains[3] = {1.75, 1.0, 2.5};
    return {
        .plugin = "bayer",
        .what = "SGRBG10P unpacked, black level 64, gains 1.75, 1, 2.5",
        .stages = "{ plugin = \"bayer\", black_level = 64, gains = " + tomlList(gains) + " }",
        .fourcc = V4L2_PIX_FMT_SGRBG10P,
        .width = width,
        .height = height,
        .frames =
            [] {
                return std::vector<PackedFrame>{
                    packedSamples(randomSamples("GRBG", 10, width, height, 101), reference::Packing::Mipi10)};
            },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                const reference::BayerSamples raw = reference::unpack(
                    frames.back().data(), reference::packedRowBytes(reference::Packing::Mipi10, width),
                    reference::Packing::Mipi10, "GRBG", 10, width, height);
                return packedSamples(reference::levels(raw, 64, gains), reference::Packing::Words);
            },
    };
}

// Each method on its own depth and order: 16-bit words and bytes.
FilterCase demosaicMhcCase()
{
    static constexpr uint32_t width = 38, height = 26;
    return {
        .plugin = "demosaic",
        .what = "Malvar-He-Cutler on 12-bit BGGR",
        .stages = R"({ plugin = "demosaic", method = "mhc" })",
        .fourcc = V4L2_PIX_FMT_SBGGR12,
        .width = width,
        .height = height,
        .frames =
            [] {
                return std::vector<PackedFrame>{
                    packedSamples(randomSamples("BGGR", 12, width, height, 201), reference::Packing::Words)};
            },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                const reference::BayerSamples raw =
                    reference::unpack(frames.back().data(), reference::packedRowBytes(reference::Packing::Words, width),
                                      reference::Packing::Words, "BGGR", 12, width, height);
                return wordBytes(reference::demosaic(raw, reference::Demosaic::Mhc));
            },
    };
}

FilterCase demosaicBilinearCase()
{
    static constexpr uint32_t width = 46, height = 22;
    return {
        .plugin = "demosaic",
        .what = "bilinear on 8-bit GBRG",
        .stages = R"({ plugin = "demosaic", method = "bilinear" })",
        .fourcc = V4L2_PIX_FMT_SGBRG8,
        .width = width,
        .height = height,
        .frames =
            [] {
                return std::vector<PackedFrame>{
                    packedSamples(randomSamples("GBRG", 8, width, height, 202), reference::Packing::Bytes)};
            },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                const reference::BayerSamples raw =
                    reference::unpack(frames.back().data(), width, reference::Packing::Bytes, "GBRG", 8, width, height);
                return wordBytes(reference::demosaic(raw, reference::Demosaic::Bilinear));
            },
    };
}

// The kernel computes in float, within 1 of the reference's double. 64 wide, so that
// packed planes start and step at multiples of 16 and block8x2 and block16x2 take their
// aligned loads and stores.
FilterCase nv12ToAbgrCase()
{
    static constexpr uint32_t width = 64, height = 38;
    return {
        .plugin = "color",
        .what = "nv12_to_abgr, BT.709 limited range",
        .stages = R"({ plugin = "color", op = "nv12_to_abgr", matrix = "bt709", range = "limited" })",
        .fourcc = DRM_FORMAT_NV12,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height * 3 / 2, 301)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                const PackedFrame& nv12 = frames.back();
                const auto uv_start = nv12.begin() + long(width * height);
                return reference::nv12ToAbgr({nv12.begin(), uv_start}, {uv_start, nv12.end()}, width, height,
                                             reference::YuvMatrix::Bt709, reference::YuvRange::Limited);
            },
        .tolerance = 1,
    };
}

// In integers, as the reference: exact.
FilterCase abgrToNv12Case()
{
    static constexpr uint32_t width = 46, height = 30;
    return {
        .plugin = "color",
        .what = "abgr_to_nv12, BT.601 full range",
        .stages = R"({ plugin = "color", op = "abgr_to_nv12", matrix = "bt601", range = "full" })",
        .fourcc = DRM_FORMAT_ABGR8888,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height * 4, 302)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                const reference::Nv12Planes planes = reference::abgrToNv12(
                    frames.back(), width, height, reference::YuvMatrix::Bt601, reference::YuvRange::Full);
                PackedFrame nv12 = planes.y;
                nv12.insert(nv12.end(), planes.uv.begin(), planes.uv.end());
                return nv12;
            },
    };
}

// A daylight sensor's matrix (rows summing to 1) with offsets that push sums below 0; on
// random values others pass 65535, so both clamps are checked.
FilterCase ccmCase()
{
    static constexpr uint32_t width = 41, height = 23;
    static constexpr double matrix[9] = {1.78, -0.62, -0.16, -0.24, 1.51, -0.27, 0.03, -0.58, 1.55};
    static constexpr double offsets[3] = {-300, 0, 125.5};
    return {
        .plugin = "ccm",
        .what = "a camera's matrix with offsets, clamping at both ends",
        .stages = "{ plugin = \"ccm\", matrix = " + tomlList(matrix) + ", offsets = " + tomlList(offsets) + " }",
        .fourcc = DRM_FORMAT_ABGR16161616,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height * 8, 401)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return wordBytes(reference::colourCorrect(words(frames.back()), matrix, offsets));
            },
    };
}

FilterCase toneCase()
{
    static constexpr uint32_t width = 43, height = 19;
    return {
        .plugin = "tone",
        .what = "the sRGB curve",
        .stages = R"({ plugin = "tone", curve = "srgb" })",
        .fourcc = DRM_FORMAT_ABGR16161616,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height * 8, 501)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::toneMap(words(frames.back()), reference::toneCurvePoints({}));
            },
    };
}

// R8, where each variant has a kernel of its own; a window wider than 3 (rows16's
// column path).
FilterCase boxR8Case()
{
    static constexpr uint32_t width = 61, height = 37;
    return {
        .plugin = "box",
        .what = "5x7 window, reflect101 border",
        .stages = R"({ plugin = "box", width = 5, height = 7, border = "reflect101" })",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height, 601)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::boxFilter(frames.back(), width, height, 1, {5, 7, Border::Reflect101, 0});
            },
    };
}

// ABGR8888, every channel, alpha too; an even window, its anchor off-centre.
FilterCase boxAbgrCase()
{
    static constexpr uint32_t width = 29, height = 19;
    return {
        .plugin = "box",
        .what = "4x2 window on ABGR8888, constant border 77",
        .stages = R"({ plugin = "box", width = 4, height = 2, border = "constant", border_value = 77 })",
        .fourcc = DRM_FORMAT_ABGR8888,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height * 4, 602)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::boxFilter(frames.back(), width, height, 4, {4, 2, Border::Constant, 77});
            },
    };
}

// The test's content: a diagonal ramp wrapping from 255 to 0, noise of up to 24 and one
// pixel in 16 at random, so that the threshold takes some neighbours and leaves others.
// Radius 3: a window row sums to at most 7 x 255 < 2048, which half precision holds
// exactly, so `half` is exact too on a device with cl_khr_fp16 (kernels/epsilon.cl).
FilterCase epsilonCase()
{
    static constexpr uint32_t width = 61, height = 37;
    return {
        .plugin = "epsilon",
        .what = "radius 3, threshold 20, constant border 200",
        .stages = R"({ plugin = "epsilon", radius = 3, threshold = 20, border = "constant", border_value = 200 })",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames =
            [] {
                std::mt19937 random(701);
                const auto noise = [&] { return int(random() % 49) - 24; };
                PackedFrame frame(size_t(width) * height);
                for (uint32_t y = 0; y < height; ++y)
                    for (uint32_t x = 0; x < width; ++x) {
                        const int ramp = int(3 * x + 2 * y) % 256;
                        frame[size_t(y) * width + x] =
                            random() % 16 == 0 ? uint8_t(random()) : uint8_t(std::clamp(ramp + noise(), 0, 255));
                    }
                return std::vector<PackedFrame>{frame};
            },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::epsilonPlane(frames.back().data(), width, height, width,
                                               {3, 20, Border::Constant, 200});
            },
    };
}

// A signed gradient, stored as R16 in two's complement.
FilterCase sobelGxCase()
{
    static constexpr uint32_t width = 61, height = 37;
    return {
        .plugin = "sobel",
        .what = "gx as R16, reflect101 border",
        .stages = R"({ plugin = "sobel", output = "gx", border = "reflect101" })",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height, 801)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::sobelPlane(frames.back().data(), width, height, width, reference::SobelOutput::Gx,
                                             Border::Reflect101, 0);
            },
    };
}

// An R8 magnitude: the kernels' float square root, corrected to the exact result.
FilterCase sobelMagnitudeCase()
{
    static constexpr uint32_t width = 53, height = 29;
    return {
        .plugin = "sobel",
        .what = "L2 magnitude, constant border 77",
        .stages = R"({ plugin = "sobel", output = "magnitude", norm = "l2", border = "constant", border_value = 77 })",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height, 802)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::sobelPlane(frames.back().data(), width, height, width,
                                             reference::SobelOutput::MagnitudeL2, Border::Constant, 77);
            },
    };
}

// The kernels compute in float, within 1 of the reference's double. R8 scaled up: the
// R8 strip's vload8 path.
FilterCase bicubicUpCase()
{
    static constexpr uint32_t width = 29, height = 17;
    return {
        .plugin = "bicubic",
        .what = "R8 29x17 to 47x31, a = -0.5, reflect101 border",
        .stages = R"({ plugin = "bicubic", width = 47, height = 31, a = -0.5, border = "reflect101" })",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height, 901)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::bicubicScale(frames.back(), width, height, 1, {47, 31, -0.5, Border::Reflect101, 0});
            },
        .tolerance = 1,
    };
}

// ABGR8888 scaled down: the other format's kernels.
FilterCase bicubicDownCase()
{
    static constexpr uint32_t width = 61, height = 37;
    return {
        .plugin = "bicubic",
        .what = "ABGR8888 61x37 to 23x13, a = -0.75, constant border 77",
        .stages = R"({ plugin = "bicubic", width = 23, height = 13, a = -0.75, border = "constant", )"
                  R"(border_value = 77 })",
        .fourcc = DRM_FORMAT_ABGR8888,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height * 4, 902)}; },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::bicubicScale(frames.back(), width, height, 4, {23, 13, -0.75, Border::Constant, 77});
            },
        .tolerance = 1,
    };
}

// Random weights in thousandths (none exact in binary but 0 and the like), the last
// making their sum 0: a high-pass around delta 128, so that few outputs saturate and
// most are rounded. The kernels sum in float, within 1 of the reference's double.
FilterCase convolveKernelCase()
{
    static constexpr uint32_t width = 61, height = 37;
    std::mt19937 random(1001);
    std::vector<double> weights;
    int thousandths_sum = 0;
    for (int i = 0; i < 14; ++i) {
        const int thousandths = int(random() % 2001) - 1000;
        weights.push_back(thousandths / 1000.0);
        thousandths_sum += thousandths;
    }
    weights.push_back(-thousandths_sum / 1000.0);
    const reference::ConvolveParams params{5, 3, weights, 0.25, 128, Border::Replicate, 0};
    return {
        .plugin = "convolve",
        .what = "5x3 high-pass kernel of random weights, scale 0.25, delta 128",
        .stages = "{ plugin = \"convolve\", kernel = " + tomlList(weights) +
                  ", kernel_width = 5, kernel_height = 3, scale = 0.25, delta = 128 }",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height, 1002)}; },
        .reference =
            [params](const std::vector<PackedFrame>& frames) {
                return reference::convolve(frames.back(), width, height, params);
            },
        .tolerance = 1,
    };
}

// A derivative across and a binomial down, around 128, saturating both ways.
FilterCase convolvePairCase()
{
    static constexpr uint32_t width = 53, height = 29;
    const std::vector<double> kernel_x = {-1, 0, 1}, kernel_y = {1, 4, 6, 4, 1};
    reference::ConvolveParams params = reference::outerProduct(kernel_x, kernel_y);
    params.scale = 0.0625 * 1.1;
    params.delta = 128;
    params.border = Border::Constant;
    params.border_value = 77;
    return {
        .plugin = "convolve",
        .what = "separable 3 x 5 derivative, delta 128, constant border 77",
        .stages = "{ plugin = \"convolve\", kernel_x = " + tomlList(kernel_x) + ", kernel_y = " + tomlList(kernel_y) +
                  ", scale = " + tomlNumber(params.scale) + ", delta = 128, border = \"constant\", border_value = 77 }",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames = [] { return std::vector<PackedFrame>{randomFrame(size_t(width) * height, 1003)}; },
        .reference =
            [params](const std::vector<PackedFrame>& frames) {
                return reference::convolve(frames.back(), width, height, params);
            },
        .tolerance = 1,
    };
}

// Flat regions with noise (reference::noisyRegions), alpha random; sr 15.5
// (cvRound(240.25) = 240) takes a region's noisy pixels and leaves other regions'.
FilterCase meanshiftCase()
{
    static constexpr uint32_t width = 47, height = 29;
    return {
        .plugin = "meanshift",
        .what = "sp 5, sr 15.5, on flat regions with noise",
        .stages = R"({ plugin = "meanshift", sp = 5, sr = 15.5, max_iter = 5, eps = 1 })",
        .fourcc = DRM_FORMAT_ABGR8888,
        .width = width,
        .height = height,
        .frames =
            [] {
                std::mt19937 random(1101);
                const std::vector<uint8_t> rgb = reference::noisyRegions(width, height, random, 3);
                PackedFrame frame(size_t(width) * height * 4);
                for (size_t pixel = 0; pixel < size_t(width) * height; ++pixel) {
                    std::copy_n(&rgb[pixel * 3], 3, &frame[pixel * 4]);
                    frame[pixel * 4 + 3] = uint8_t(random());
                }
                return std::vector<PackedFrame>{frame};
            },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                return reference::meanShiftPlane(frames.back().data(), width, height, 4 * width, {5, 15.5, 5, 1}).abgr;
            },
    };
}

// Two frames of one session: noise, then the same moved 3 right and 2 up, with new
// noise where it came from outside; the second frame is matched against the first.
// Blocks cut short at the right and bottom.
FilterCase blockmatchCase()
{
    static constexpr uint32_t width = 53, height = 37;
    constexpr int dx = 3, dy = -2;
    static constexpr reference::BlockMatchParams params{8, 4, reference::BlockMetric::Ssd, Border::Reflect101, 0};
    return {
        .plugin = "blockmatch",
        .what = "8x8 blocks, range 4, SSD, a frame moved by (3, -2)",
        .stages = R"({ plugin = "blockmatch", block = 8, range = 4, metric = "ssd", border = "reflect101" })",
        .fourcc = DRM_FORMAT_R8,
        .width = width,
        .height = height,
        .frames =
            [] {
                const PackedFrame previous = randomFrame(size_t(width) * height, 1201);
                PackedFrame current = randomFrame(size_t(width) * height, 1202);
                for (int y = 0; y < int(height); ++y)
                    for (int x = 0; x < int(width); ++x)
                        if (x - dx >= 0 && x - dx < int(width) && y - dy >= 0 && y - dy < int(height))
                            current[size_t(y) * width + size_t(x)] = previous[size_t(y - dy) * width + size_t(x - dx)];
                return std::vector<PackedFrame>{previous, current};
            },
        .reference =
            [](const std::vector<PackedFrame>& frames) {
                const PackedFrame& previous = frames[frames.size() - 2];
                return reference::blockMatch(previous.data(), width, frames.back().data(), width, width, height,
                                             params);
            },
    };
}

} // namespace

std::vector<FilterCase> filterCases()
{
    return {
        bayerCase(),
        demosaicMhcCase(),
        demosaicBilinearCase(),
        nv12ToAbgrCase(),
        abgrToNv12Case(),
        ccmCase(),
        toneCase(),
        boxR8Case(),
        boxAbgrCase(),
        epsilonCase(),
        sobelGxCase(),
        sobelMagnitudeCase(),
        bicubicUpCase(),
        bicubicDownCase(),
        convolveKernelCase(),
        convolvePairCase(),
        meanshiftCase(),
        blockmatchCase(),
    };
}

} // namespace framecl::selftest
