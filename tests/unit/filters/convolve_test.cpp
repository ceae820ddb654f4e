// The convolve plugin on the test device (PoCL in CI), through sessions on padded
// buffers, against the CPU reference of daemon/reference/reference_convolve.hpp.
//
// The kernels sum in float with weights rounded to float, the reference in double, so
// a result may differ by 1 where the exact value lies near a rounding boundary: the
// random cases allow ±1. Weights whose products and sums are exact in float (small
// integers, power-of-two scales) must give the reference exactly, and do below.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_box.hpp"
#include "reference_convolve.hpp"
#include "reference_sobel.hpp"

using namespace framecl;
using reference::Border;
using reference::ConvolveParams;
using test::LaidOutBuffer;
using test::paddedLayout;

namespace {

struct Size {
    int width;
    int height;
};

struct BorderRule {
    const char* name;
    Border border;
};

constexpr BorderRule border_rules[] = {
    {"replicate", Border::Replicate}, {"reflect101", Border::Reflect101}, {"constant", Border::Constant}};
constexpr uint8_t border_value = 77; // every pipeline's; only the constant border uses it

// No side a multiple of 2, 8 or 16: row8's last work item of a row is partial, and the
// small images are narrower and lower than the largest kernel.
constexpr Size sizes[] = {{1, 1}, {17, 5}, {641, 479}, {1283, 721}};

constexpr const char* two_d_variants[] = {"auto", "direct", "row8", "image", "block"};
constexpr const char* pair_variants[] = {"auto",  "direct", "separable", "separable8",
                                         "row8",  "image",  "block",     "sepblock"};

// A double as TOML reads it back exactly: 17 significant digits.
std::string tomlNumber(double value)
{
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

std::string tomlList(const std::vector<double>& values)
{
    std::string list = "[";
    for (size_t i = 0; i < values.size(); ++i)
        list += (i ? ", " : "") + tomlNumber(values[i]);
    return list + "]";
}

// One kernel of the random-image cases: its stage parameters and its reference.
struct KernelCase {
    std::string name;
    std::string toml; // the kernel, scale and delta of the stage
    ConvolveParams reference;
    bool pair;
};

KernelCase twoD(const std::string& name, int width, int height, const std::vector<double>& weights, double scale,
                double delta)
{
    KernelCase c{name, "", {width, height, weights, scale, delta}, false};
    c.toml = "kernel = " + tomlList(weights) + ", kernel_width = " + std::to_string(width) +
             ", kernel_height = " + std::to_string(height) + ", scale = " + tomlNumber(scale) +
             ", delta = " + tomlNumber(delta);
    return c;
}

KernelCase pairCase(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
                    double scale, double delta)
{
    KernelCase c{name, "", reference::outerProduct(x, y), true};
    c.reference.scale = scale;
    c.reference.delta = delta;
    c.toml = "kernel_x = " + tomlList(x) + ", kernel_y = " + tomlList(y) + ", scale = " + tomlNumber(scale) +
             ", delta = " + tomlNumber(delta);
    return c;
}

// `count` weights in [-1, 1] with three decimals (none exact in binary but 0 and ±0.5
// and the like), the same at every run.
std::vector<double> randomWeights(size_t count, uint32_t seed)
{
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> thousandths(-1000, 1000);
    std::vector<double> weights;
    for (size_t i = 0; i < count; ++i)
        weights.push_back(thousandths(random) / 1000.0);
    return weights;
}

// A normalised Gaussian of `taps` taps (sigma 1.5 for 9).
std::vector<double> gaussian(int taps, double sigma)
{
    std::vector<double> weights;
    double sum = 0;
    for (int i = 0; i < taps; ++i) {
        const double d = i - (taps - 1) / 2.0;
        weights.push_back(std::exp(-d * d / (2 * sigma * sigma)));
        sum += weights.back();
    }
    for (double& w : weights)
        w /= sum;
    return weights;
}

// The 2D kernels: one pixel; 3x3 sharpening (negative weights, saturating at 0 and
// 255 on random images); 5 wide and 3 high; 2x2, its anchor off-centre at (1, 1), whose
// tenths and delta 0.5 put about one exact result in ten on a tie, where float and
// double round either way (the worst case for the ±1: about 1% of its pixels differ
// by 1 on PoCL, against a few in 10^5 for the others); 9x9 with random signs; 1 wide
// and 9 high. Scales and deltas keep most results inside 0..255 so that rounding
// matters.
const std::vector<KernelCase>& twoDCases()
{
    static const std::vector<KernelCase> cases = {
        twoD("k1x1", 1, 1, {0.75}, 1, 10),
        twoD("k3x3", 3, 3, {0, -1, 0, -1, 5, -1, 0, -1, 0}, 1, 0),
        twoD("k5x3", 5, 3, randomWeights(15, 53), 0.25, 128),
        twoD("k2x2", 2, 2, {0.1, 0.2, 0.3, 0.4}, 1, 0.5),
        twoD("k9x9", 9, 9, randomWeights(81, 99), 0.1, 128),
        twoD("k1x9", 1, 9, randomWeights(9, 19), 0.3, 128),
    };
    return cases;
}

// The separable pairs: a 9-tap Gaussian across and a 3-tap binomial down; the largest,
// 9 taps each way (Gaussians, sharpened by scale and shifted by delta); a derivative
// across and a 5-tap binomial down, scaled and offset to 128 (saturating both ways);
// a single tap across and 7 random taps down.
const std::vector<KernelCase>& pairCases()
{
    static const std::vector<KernelCase> cases = {
        pairCase("g9x3", gaussian(9, 1.5), {0.25, 0.5, 0.25}, 1, 0),
        pairCase("g9x9", gaussian(9, 2), gaussian(9, 1.2), 1.5, -20),
        pairCase("d3x5", {-1, 0, 1}, {1, 4, 6, 4, 1}, 0.0625 * 1.1, 128),
        pairCase("p1x7", {1.3}, randomWeights(7, 7), 0.5, 100),
    };
    return cases;
}

// The variants that take a 2D kernel, or a separable pair.
std::vector<const char*> variantsOf(bool pair)
{
    if (pair)
        return {std::begin(pair_variants), std::end(pair_variants)};
    return {std::begin(two_d_variants), std::end(two_d_variants)};
}

std::string pipelineName(const std::string& kernel, const std::string& border, const std::string& variant)
{
    return "convolve-" + kernel + "-" + border + "-" + variant;
}

std::string convolvePipeline(const std::string& name, const std::string& stage_params)
{
    return "[[pipeline]]\nname = \"" + name + "\"\nstages = [ { plugin = \"convolve\", " + stage_params + " } ]\n";
}

// Hand-checked one-row cases below: kernel parameters by name, each with every variant
// that takes it (the pair ones with separable too).
struct HandCase {
    const char* name;
    const char* params;
    bool pair;
};
constexpr HandCase hand_cases[] = {
    {"left2", "kernel = [1, 0], kernel_width = 2, kernel_height = 1", false},
    {"right2", "kernel = [0, 1], kernel_width = 2, kernel_height = 1", false},
    {"left3", "kernel = [1, 0, 0], kernel_width = 3, kernel_height = 1", false},
    {"half", "kernel = [0.5], kernel_width = 1, kernel_height = 1", false},
    {"edge", "kernel = [-1, 3, -1], kernel_width = 3, kernel_height = 1", false},
    {"scaled", "kernel = [1], kernel_width = 1, kernel_height = 1, scale = 0.5, delta = 10", false},
    {"up-left", "kernel = [1, 0, 0, 0], kernel_width = 2, kernel_height = 2", false},
    {"pair-up-left", "kernel_x = [1, 0], kernel_y = [1, 0]", true},
    {"binomial", "kernel = [1, 2, 1, 2, 4, 2, 1, 2, 1], kernel_width = 3, kernel_height = 3, scale = 0.0625",
     false},
    {"pair-binomial", "kernel_x = [1, 2, 1], kernel_y = [1, 2, 1], scale = 0.0625", true},
    {"pair-x-only", "kernel_x = [1, 2, 1], kernel_y = [1], scale = 0.25", true},
};

std::string testPipelines()
{
    std::string toml;
    for (const BorderRule& rule : border_rules) {
        const std::string border = std::string("border = \"") + rule.name +
                                   "\", border_value = " + std::to_string(border_value);
        for (const KernelCase& c : twoDCases())
            for (const char* variant : two_d_variants)
                toml += convolvePipeline(pipelineName(c.name, rule.name, variant),
                                         c.toml + ", " + border + ", variant = \"" + variant + "\"");
        for (const KernelCase& c : pairCases())
            for (const char* variant : pair_variants)
                toml += convolvePipeline(pipelineName(c.name, rule.name, variant),
                                         c.toml + ", " + border + ", variant = \"" + variant + "\"");
        for (const HandCase& c : hand_cases)
            for (const char* variant : variantsOf(c.pair))
                toml += convolvePipeline(pipelineName(c.name, rule.name, variant),
                                         std::string(c.params) + ", " + border + ", variant = \"" + variant + "\"");
    }
    toml += R"(
[[pipeline]]
name = "convolve-sobel"
stages = [ { plugin = "convolve", kernel = [1, 2, 1, 2, 4, 2, 1, 2, 1], kernel_width = 3, kernel_height = 3, scale = 0.0625, border = "reflect101" },
           { plugin = "sobel", border = "reflect101" } ]

[[pipeline]]
name = "convolve-pair-box"
stages = [ { plugin = "convolve", kernel_x = [1, 4, 6, 4, 1], kernel_y = [-1, 0, 1], scale = 0.125, delta = 128 },
           { plugin = "box", width = 3, height = 5, border = "constant", border_value = 9 } ]

[[pipeline]]
name = "convolve-defaults"
stages = [ { plugin = "convolve", kernel = [2], kernel_width = 1, kernel_height = 1 } ]
)";
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice device(testPipelines());
    return device;
}

// Every case at every size under every border rule, through every variant that takes
// it, within ±1 of the reference, and nothing written outside the output's rows. The
// input and the reference are shared by the variants; the input's rows are padded by
// 7 bytes and the output's by 5, so neither stride is the width or a multiple of 8.
void checkCases(const std::vector<KernelCase>& cases)
{
    uint32_t seed = 1;
    for (const Size& image : sizes) {
        const framecl_format format{DRM_FORMAT_R8, uint32_t(image.width), uint32_t(image.height)};
        for (const KernelCase& c : cases) {
            for (const BorderRule& rule : border_rules) {
                CAPTURE(format.width);
                CAPTURE(format.height);
                CAPTURE(c.name);
                const std::string border = rule.name;
                CAPTURE(border);
                LaidOutBuffer in(*device().gpu, paddedLayout(format, 7), seed++);
                ConvolveParams params = c.reference;
                params.border = rule.border;
                params.border_value = border_value;
                const auto expected = reference::convolve(in.plane(0), image.width, image.height, params);
                for (const char* variant : variantsOf(c.pair)) {
                    CAPTURE(variant);
                    LaidOutBuffer out(*device().gpu, paddedLayout(format, 5), 0);
                    auto session = device().open(pipelineName(c.name, border, variant), format);
                    device().run(*session, in, out);
                    CHECK(test::differingPixels(out.plane(0), expected, format.width, 1, 1) == "");
                    CHECK(out.paddingWritten() == 0);
                }
            }
        }
    }
}

// An R8 frame of the rows of `pixels` (packed, `width` per row), run through `pipeline`.
std::vector<uint8_t> runImage(const std::string& pipeline, const std::vector<uint8_t>& pixels, uint32_t width)
{
    const framecl_format format{DRM_FORMAT_R8, width, uint32_t(pixels.size() / width)};
    LaidOutBuffer in(*device().gpu, paddedLayout(format, 3), 1);
    LaidOutBuffer out(*device().gpu, paddedLayout(format, 3), 0);
    for (uint32_t y = 0; y < format.height; ++y)
        std::copy(pixels.begin() + long(y * width), pixels.begin() + long((y + 1) * width), in.rowStart(0, y));
    in.upload();
    auto session = device().open(pipeline, format);
    device().run(*session, in, out);
    return out.plane(0);
}

// Every variant of hand case `name` (replicate border) gives `expected` on `pixels`.
void checkHand(const std::string& name, const std::vector<uint8_t>& pixels, uint32_t width,
               const std::vector<uint8_t>& expected, const char* border = "replicate")
{
    bool pair = false;
    for (const HandCase& c : hand_cases)
        if (name == c.name)
            pair = c.pair;
    for (const char* variant : variantsOf(pair)) {
        CAPTURE(name);
        CAPTURE(variant);
        CHECK(runImage(pipelineName(name, border, variant), pixels, width) == expected);
    }
}

// Problems of a config with one convolve pipeline `p` whose stage has `params`, loaded
// without a device (the parameters are checked when the config loads).
std::string configProblem(const std::string& params)
{
    const auto config = test::pipelineConfig(convolvePipeline("p", params));
    const auto set = pipeline::loadPipelineSet(config, nullptr, nullptr);
    REQUIRE(set.catalog.problems.size() == 1);
    CHECK_FALSE(set.catalog.find("p"));
    return set.catalog.problems[0];
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("every variant is within 1 of the reference for 2D kernels at every size and border")
{
    checkCases(twoDCases());
}

TEST_CASE("every variant is within 1 of the reference for separable pairs at every size and border")
{
    checkCases(pairCases());
}

TEST_CASE("weights exact in float give the reference exactly in every variant")
{
    // 1 2 1 / 2 4 2 / 1 2 1 with scale 1/16: every product and partial sum is a
    // multiple of 1/16 below 2^24, so float is exact, ties included (to even). 207
    // leaves 7 pixels to the last work item of a row of the 8-wide variants (the sizes
    // above leave 1 or 3).
    const framecl_format format{DRM_FORMAT_R8, 207, 37};
    for (const BorderRule& rule : border_rules) {
        LaidOutBuffer in(*device().gpu, paddedLayout(format, 7), 5);
        ConvolveParams params = reference::outerProduct({1, 2, 1}, {1, 2, 1});
        params.scale = 0.0625;
        params.border = rule.border;
        params.border_value = border_value;
        const auto expected = reference::convolve(in.plane(0), int(format.width), int(format.height), params);
        for (const std::string name : {"binomial", "pair-binomial"}) {
            for (const char* variant : variantsOf(name == "pair-binomial")) {
                CAPTURE(rule.name);
                CAPTURE(name);
                CAPTURE(variant);
                LaidOutBuffer out(*device().gpu, paddedLayout(format, 5), 0);
                auto session = device().open(pipelineName(name, rule.name, variant), format);
                device().run(*session, in, out);
                CHECK(test::differingPixels(out.plane(0), expected, format.width, 1) == "");
            }
        }
    }
}

TEST_CASE("the kernel is a correlation, not flipped, anchored at (kernel_width/2, kernel_height/2)")
{
    // [1 0 0]: the anchor is the centre tap, so out(x) = p(x - 1); a flipped kernel
    // (a true convolution) would give p(x + 1).
    checkHand("left3", {10, 20, 30, 40}, 4, {10, 10, 20, 30});
    // A 2-wide kernel is anchored at its second tap: [1 0] reads x - 1, [0 1] reads x.
    checkHand("left2", {10, 20, 30, 40}, 4, {10, 10, 20, 30});
    checkHand("right2", {10, 20, 30, 40}, 4, {10, 20, 30, 40});
    // 2x2 [1 0; 0 0] and the pair [1 0] x [1 0] read the pixel up and to the left.
    const std::vector<uint8_t> image = {10, 20, 30, 40, 50, 60};
    checkHand("up-left", image, 3, {10, 10, 20, 10, 10, 20});
    checkHand("pair-up-left", image, 3, {10, 10, 20, 10, 10, 20});
}

TEST_CASE("results round to nearest with ties to even")
{
    // 0.5 p: 0.5, 1.5, 2.5, 3.5 and 1 round to 0, 2, 2, 4 and 1.
    checkHand("half", {1, 3, 5, 7, 2}, 5, {0, 2, 2, 4, 1});
}

TEST_CASE("scale and delta change the result: scale x sum + delta")
{
    // 0.5 p + 10: 100 -> 60, 7 -> 13.5 -> 14 (tie to even), 255 -> 137.5 -> 138.
    checkHand("scaled", {100, 7, 255}, 3, {60, 14, 138});
}

TEST_CASE("negative weights saturate at 0 and large sums at 255")
{
    // [-1 3 -1] on 0 0 200 200 (replicate): 0, -200, 400, 200.
    checkHand("edge", {0, 0, 200, 200}, 4, {0, 0, 255, 200});
    // Under a constant border of 77: -77, -200, 400, -200 + 600 - 77 = 323.
    checkHand("edge", {0, 0, 200, 200}, 4, {0, 0, 255, 255}, "constant");
}

TEST_CASE("auto runs one pass for a 2D kernel and for a separable pair, separable two")
{
    const framecl_format format{DRM_FORMAT_R8, 17, 5};
    const auto dispatches = [&](const std::string& pipeline) {
        LaidOutBuffer in(*device().gpu, paddedLayout(format, 0), 1), out(*device().gpu, paddedLayout(format, 0), 0);
        auto session = device().open(pipeline, format);
        return device().run(*session, in, out).events.size(); // one event per dispatch
    };
    CHECK(dispatches(pipelineName("g9x3", "replicate", "auto")) == 1);
    CHECK(dispatches(pipelineName("p1x7", "replicate", "auto")) == 1);
    CHECK(dispatches(pipelineName("k9x9", "replicate", "auto")) == 1);
    CHECK(dispatches(pipelineName("k1x9", "replicate", "auto")) == 1);
    CHECK(dispatches(pipelineName("g9x3", "replicate", "direct")) == 1);
    CHECK(dispatches(pipelineName("g9x3", "replicate", "row8")) == 1);
    CHECK(dispatches(pipelineName("g9x3", "replicate", "separable")) == 2);
    CHECK(dispatches(pipelineName("g9x3", "replicate", "separable8")) == 2);
    CHECK(dispatches(pipelineName("g9x3", "replicate", "sepblock")) == 1);
}

TEST_CASE("a kernel whose size does not match its values is a config error naming the parameters")
{
    const std::string problem =
        configProblem("kernel = [1, 2, 3, 4, 5, 6, 7, 8], kernel_width = 3, kernel_height = 3");
    CAPTURE(problem);
    CHECK(contains(problem, "test.toml:"));
    CHECK(contains(problem, "pipeline 'p', stage 1 (convolve"));
    CHECK(contains(problem, "kernel has 8 values, kernel_width x kernel_height is 3 x 3 = 9"));
    // Every input format is refused alike: the message is about the parameters.
    CHECK(!contains(problem, "formats do not chain"));
}

TEST_CASE("a kernel without its width and height is a config error")
{
    const std::string problem = configProblem("kernel = [1, 2, 3, 4], kernel_width = 2");
    CAPTURE(problem);
    CHECK(contains(problem, "kernel has 4 values but needs kernel_width and kernel_height (1 to 9)"));
}

TEST_CASE("a 2D kernel and a separable pair together are a config error")
{
    const std::string problem =
        configProblem("kernel = [1], kernel_width = 1, kernel_height = 1, kernel_x = [1, 2, 1], kernel_y = [1]");
    CAPTURE(problem);
    CHECK(contains(problem,
                   "give either kernel (with kernel_width and kernel_height) or kernel_x and kernel_y, not both"));
}

TEST_CASE("half a separable pair, no kernel at all, or a pair with kernel_width are config errors")
{
    std::string problem = configProblem("kernel_x = [1, 2, 1]");
    CAPTURE(problem);
    CHECK(contains(problem, "kernel_x needs kernel_y"));
    problem = configProblem("kernel_y = [1, 2, 1]");
    CHECK(contains(problem, "kernel_y needs kernel_x"));
    problem = configProblem("scale = 2");
    CHECK(contains(problem,
                   "no kernel: give kernel with kernel_width and kernel_height, or kernel_x and kernel_y"));
    problem = configProblem("kernel_x = [1, 2, 1], kernel_y = [1], kernel_width = 3");
    CHECK(contains(problem, "kernel_width and kernel_height go with kernel"));
}

TEST_CASE("the separable variant with a 2D kernel, or a kernel beyond 9x9, is a config error")
{
    std::string problem =
        configProblem("kernel = [1], kernel_width = 1, kernel_height = 1, variant = \"separable\"");
    CAPTURE(problem);
    CHECK(contains(problem, "variant separable needs kernel_x and kernel_y, not a 2D kernel"));
    problem = configProblem("kernel = [1], kernel_width = 10, kernel_height = 1");
    CHECK(contains(problem, "kernel_width must be between 0 and 9, got 10"));
    problem = configProblem("kernel_x = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], kernel_y = [1]");
    CHECK(contains(problem, "kernel_x must hold 1 to 9 numbers, got 10"));
}

TEST_CASE("convolve refuses an input that is not R8, naming its format")
{
    auto session = device().tryOpen("convolve-defaults", {DRM_FORMAT_ABGR8888, 64, 32});
    REQUIRE_FALSE(session);
    CAPTURE(session.error().message);
    CHECK(contains(session.error().message, "input must be R8, got ABGR8888"));
}

TEST_CASE("convolve then sobel runs as a two-stage pipeline equal to the references composed")
{
    // The binomial's results are exact in float (see above), so the composition is too.
    const framecl_format format{DRM_FORMAT_R8, 642, 481};
    LaidOutBuffer in(*device().gpu, paddedLayout(format, 9), 11);
    LaidOutBuffer out(*device().gpu, paddedLayout(format, 5), 0);
    auto session = device().open("convolve-sobel", format);
    CHECK(session->stageNames().size() == 2);
    device().run(*session, in, out);
    ConvolveParams params = reference::outerProduct({1, 2, 1}, {1, 2, 1});
    params.scale = 0.0625;
    params.border = Border::Reflect101;
    const auto smoothed = reference::convolve(in.plane(0), 642, 481, params);
    const auto expected =
        reference::sobelPlane(smoothed.data(), 642, 481, 642, reference::SobelOutput::MagnitudeL1, Border::Reflect101, 0);
    CHECK(test::differingPixels(out.plane(0), expected, 642, 1) == "");
    CHECK(out.paddingWritten() == 0);
}

TEST_CASE("a separable convolve then box runs as a two-stage pipeline equal to the references composed")
{
    // Integer taps scaled by 1/8 with delta 128: exact in float, so exact after box.
    const framecl_format format{DRM_FORMAT_R8, 333, 97};
    LaidOutBuffer in(*device().gpu, paddedLayout(format, 9), 12);
    LaidOutBuffer out(*device().gpu, paddedLayout(format, 5), 0);
    auto session = device().open("convolve-pair-box", format);
    device().run(*session, in, out);
    ConvolveParams params = reference::outerProduct({1, 4, 6, 4, 1}, {-1, 0, 1});
    params.scale = 0.125;
    params.delta = 128;
    const auto derivative = reference::convolve(in.plane(0), 333, 97, params);
    const auto expected = reference::boxFilter(derivative, 333, 97, 1, {3, 5, Border::Constant, 9});
    CHECK(test::differingPixels(out.plane(0), expected, 333, 1) == "");
    CHECK(out.paddingWritten() == 0);
}
