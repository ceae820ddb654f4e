#include "bench_cases.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <linux/videodev2.h> // the Bayer formats' fourccs
#include "framecl/format.h"

namespace framecl::bench {
namespace {

std::string none(const FrameSize&)
{
    return "";
}

constexpr uint32_t blockmatch_block = 16;

// The ISP stages' own size besides --sizes: a 12.3 MP sensor (4056x3040, as Sony's
// IMX477).
constexpr FrameSize isp_size{4056, 3040};

// The ISP's stages with a camera's settings: a black level of 64 in 10 bits, daylight
// gains, a sensor's matrix.
std::string ispLevelsStatistics(const FrameSize&)
{
    return "black_level = 64, gains = [1.9, 1.0, 1.6], statistics = true";
}
constexpr const char* isp_matrix = "matrix = [1.78, -0.62, -0.16, -0.24, 1.51, -0.27, 0.03, -0.58, 1.55]";

} // namespace

const std::vector<BenchCase>& benchCases()
{
    // Parameters: the guide's examples where it gives them (epsilon radius 4, i.e. 9x9,
    // threshold 20; box 3x3; Sobel magnitude), box 15x15 and 31x31 (the widest box of
    // docs/benchmarks.md's targets), the paper's sp 5, sr 6 for mean shift; bicubic at
    // OpenCV's a = -0.75, so that compare_opencv.py times INTER_CUBIC against the same
    // weights. blockmatch by SSD, so that compare_opencv.py's matchTemplate TM_SQDIFF has its
    // cost; moved by (3, -2), within its range of 8. demosaic's bilinear on 10-bit RGGB,
    // so that compare_opencv.py checks it against cvtColor COLOR_BayerBG2RGB on 16 bits;
    // the ISP's stages with a camera's settings, alone and as the camera-isp pipeline
    // chains them (config/pipelines.d/camera-isp.toml), RAW10 to NV12 with statistics;
    // the shipped edges, denoise-edges and camera-prep pipelines (config/pipelines.d).
    static const std::vector<BenchCase> cases = {
        {"copy", "copy", DRM_FORMAT_ABGR8888, none, {}},
        {"color nv12_to_abgr", "color", DRM_FORMAT_NV12,
         [](const FrameSize&) -> std::string { return "op = \"nv12_to_abgr\""; }, {}},
        {"box 3x3", "box", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string { return "width = 3, height = 3"; }, {}},
        {"box 15x15", "box", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string { return "width = 15, height = 15"; }, {}},
        {"box 31x31", "box", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string { return "width = 31, height = 31"; }, {}},
        {"epsilon r4 t20", "epsilon", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string { return "radius = 4, threshold = 20"; }, {}},
        {"sobel magnitude l1", "sobel", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string { return "output = \"magnitude\", norm = \"l1\""; }, {}},
        {"bicubic R8 to half size", "bicubic", DRM_FORMAT_R8,
         [](const FrameSize& size) {
             return fmt::format("width = {}, height = {}, a = -0.75", size.width / 2, size.height / 2);
         },
         {}},
        {"bicubic ABGR8888 to double size", "bicubic", DRM_FORMAT_ABGR8888,
         [](const FrameSize& size) {
             return fmt::format("width = {}, height = {}, a = -0.75", size.width * 2, size.height * 2);
         },
         {}},
        {"convolve 5x5", "convolve", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string {
             return "kernel_width = 5, kernel_height = 5, kernel = [1, 4, 6, 4, 1, 4, 16, 24, 16, 4, 6, 24, 36, 24, "
                    "6, 4, 16, 24, 16, 4, 1, 4, 6, 4, 1], scale = 0.00390625";
         },
         {}},
        {"convolve 9+9 separable", "convolve", DRM_FORMAT_R8,
         [](const FrameSize&) -> std::string {
             return "kernel_x = [1, 8, 28, 56, 70, 56, 28, 8, 1], kernel_y = [1, 8, 28, 56, 70, 56, 28, 8, 1], "
                    "scale = 0.0000152587890625";
         },
         {}},
        {"color abgr_to_nv12", "color", DRM_FORMAT_ABGR8888,
         [](const FrameSize&) -> std::string { return "op = \"abgr_to_nv12\", matrix = \"bt709\""; }, {}},
        {"bayer SRGGB10P levels", "bayer", V4L2_PIX_FMT_SRGGB10P,
         [](const FrameSize&) -> std::string { return "black_level = 64, gains = [1.9, 1.0, 1.6]"; },
         {isp_size}},
        {"bayer SRGGB10P levels, statistics", "bayer", V4L2_PIX_FMT_SRGGB10P, ispLevelsStatistics, {isp_size}},
        {"demosaic bilinear SRGGB10", "demosaic", V4L2_PIX_FMT_SRGGB10,
         [](const FrameSize&) -> std::string { return "method = \"bilinear\""; }, {isp_size}},
        {"demosaic mhc SRGGB10", "demosaic", V4L2_PIX_FMT_SRGGB10,
         [](const FrameSize&) -> std::string { return "method = \"mhc\""; }, {isp_size}},
        {"ccm", "ccm", DRM_FORMAT_ABGR16161616, [](const FrameSize&) { return std::string(isp_matrix); },
         {isp_size}},
        {"tone srgb", "tone", DRM_FORMAT_ABGR16161616, none, {isp_size}},
        {"camera ISP SRGGB10P to NV12, statistics", "bayer", V4L2_PIX_FMT_SRGGB10P, ispLevelsStatistics,
         {isp_size}, std::nullopt,
         {{"demosaic", "method = \"mhc\""},
          {"ccm", isp_matrix},
          {"tone", "curve = \"srgb\""},
          {"color", "op = \"abgr_to_nv12\", matrix = \"bt709\", range = \"limited\""}}},
        {"edges ABGR8888", "color", DRM_FORMAT_ABGR8888,
         [](const FrameSize&) -> std::string { return "op = \"abgr_to_y\""; }, {}, std::nullopt,
         {{"epsilon", "radius = 4, threshold = 20"}, {"sobel", "output = \"magnitude\""}}},
        {"denoise-edges NV12", "color", DRM_FORMAT_NV12,
         [](const FrameSize&) -> std::string { return "op = \"nv12_to_y\""; }, {}, std::nullopt,
         {{"epsilon", "radius = 4, threshold = 20"}, {"sobel", "output = \"magnitude\""}}},
        {"camera-prep NV12 to 960x540 ABGR8888", "color", DRM_FORMAT_NV12,
         [](const FrameSize&) -> std::string {
             return "op = \"nv12_to_abgr\", matrix = \"bt709\", range = \"limited\"";
         },
         {}, std::nullopt, {{"bicubic", "width = 960, height = 540"}}},
        {"meanshift sp5 sr6", "meanshift", DRM_FORMAT_ABGR8888,
         [](const FrameSize&) -> std::string { return "sp = 5, sr = 6"; }, {{2560, 2560}}},
        {"blockmatch b16 r8 ssd", "blockmatch", DRM_FORMAT_R8,
         [](const FrameSize&) { return fmt::format("block = {}, range = 8, metric = \"ssd\"", blockmatch_block); },
         {}, Motion{3, -2, blockmatch_block}},
    };
    return cases;
}

bool parseSize(const std::string& text, FrameSize& size)
{
    unsigned width = 0, height = 0;
    char end = 0;
    if (std::sscanf(text.c_str(), "%ux%u%c", &width, &height, &end) != 2 || width == 0 || height == 0)
        return false;
    size = {width, height};
    return true;
}

} // namespace framecl::bench
