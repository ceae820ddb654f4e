// The meanshift plugin on the test device (PoCL in CI), through sessions on padded
// buffers, against the CPU reference of daemon/reference/reference_meanshift.hpp: every
// variant equals it on every byte, for spatial and colour radii from the smallest to
// ones that take the whole window, on random frames and on frames of flat regions with
// noise, where pixels shift several times before they stop.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_color.hpp"
#include "reference_meanshift.hpp"

using namespace framecl;
using test::LaidOutBuffer;
using reference::MeanShiftParams;
using test::paddedLayout;

namespace {

constexpr const char* variants[] = {"auto", "baseline", "packed", "local", "image"};

struct ParamSet {
    const char* name; // in pipeline names
    const char* toml; // the stage's parameters
    MeanShiftParams params;
};
constexpr ParamSet param_sets[] = {
    // The defaults: sp 5, sr 6, max_iter 5, eps 1.
    {"defaults", "", {5, 6, 5, 1}},
    // Only pixels of the current colour itself join the mean.
    {"sr0", "sp = 2, sr = 0, max_iter = 5, eps = 1", {2, 0, 5, 1}},
    // Every pixel of the window joins (442 > √3 · 255): an iterated box mean, which
    // moves windows clipped at the frame's edges; eps 2.5 stops at a bound of 2.
    {"all", "sp = 4, sr = 442, max_iter = 7, eps = 2.5", {4, 442, 7, 2.5}},
    // cvRound(15.5²) = cvRound(240.25) = 240; a single shift.
    {"once", "sp = 1, sr = 15.5, max_iter = 1, eps = 0", {1, 15.5, 1, 0}},
    // A wider window and colour radius, stopping only where the position stays.
    {"wide", "sp = 8, sr = 30, max_iter = 10, eps = 0", {8, 30, 10, 0}},
};

// The largest window with every pixel taken: moves of up to 16 pixels a shift at the
// frame's edges, past the local variant's tile (a margin of 36 for sp = 32), so that
// its windows also read global memory. Slow on PoCL: run on small frames only.
constexpr ParamSet far_set = {"far", "sp = 32, sr = 442, max_iter = 6, eps = 0", {32, 442, 6, 0}};

// Rows padded by these many bytes, and planes starting as far into their buffers:
// 11 gives offsets and strides that are not multiples of 4 (the packed kernels' vload4
// path), 12 ones that are (their 32-bit loads); the output's 5 never is.
constexpr uint32_t unaligned_padding = 11;
constexpr uint32_t aligned_padding = 12;
constexpr uint32_t output_padding = 5;

std::string pipelineName(const char* variant, const ParamSet& set)
{
    return std::string("meanshift-") + variant + "-" + set.name;
}

// One pipeline per variant and parameter set; meanshift then abgr_to_y; the defaults.
std::string testPipelines()
{
    std::string toml;
    for (const char* variant : variants) {
        std::vector<ParamSet> sets(std::begin(param_sets), std::end(param_sets));
        sets.push_back(far_set);
        for (const auto& set : sets)
            toml += "[[pipeline]]\nname = \"" + pipelineName(variant, set) + "\"\n" +
                    "stages = [ { plugin = \"meanshift\", " + set.toml + (*set.toml ? ", " : "") +
                    "variant = \"" + variant + "\" } ]\n";
    }
    toml += R"(
[[pipeline]]
name = "meanshift-defaults"
stages = [ { plugin = "meanshift" } ]
[[pipeline]]
name = "meanshift-luma"
stages = [ { plugin = "meanshift", sp = 3, sr = 20 }, { plugin = "color", op = "abgr_to_y" } ]
)";
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice opened(testPipelines());
    return opened;
}

LaidOutBuffer randomFrame(uint32_t width, uint32_t height, uint32_t padding, uint32_t seed)
{
    return LaidOutBuffer(*device().gpu, paddedLayout({DRM_FORMAT_ABGR8888, width, height}, padding),
                         seed);
}

// reference::noisyRegions in a padded frame, alpha random.
LaidOutBuffer regionFrame(uint32_t width, uint32_t height, uint32_t padding, uint32_t seed,
                          int noise = 3)
{
    LaidOutBuffer frame = randomFrame(width, height, padding, seed);
    std::mt19937 random(seed);
    const std::vector<uint8_t> rgb = reference::noisyRegions(width, height, random, noise);
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x)
            std::copy_n(&rgb[(size_t(y) * width + x) * 3], 3, frame.rowStart(0, y) + 4 * x);
    frame.upload();
    return frame;
}

LaidOutBuffer paddedOutput(uint32_t width, uint32_t height)
{
    return LaidOutBuffer(*device().gpu,
                         paddedLayout({DRM_FORMAT_ABGR8888, width, height}, output_padding), 0);
}

reference::MeanShiftResult expectedOutput(LaidOutBuffer& in, const MeanShiftParams& params)
{
    return reference::meanShiftPlane(in.rowStart(0, 0), int(in.layout.width), int(in.layout.height),
                                int(in.layout.planes[0].stride), params);
}

// Runs `variant` with `set` on `in` and compares every byte with `expected`; nothing
// outside the output's rows may be written.
void checkVariant(LaidOutBuffer& in, const char* variant, const ParamSet& set,
                  const reference::MeanShiftResult& expected)
{
    const std::string name = pipelineName(variant, set);
    const uint32_t w = in.layout.width, h = in.layout.height;
    const uint32_t input_stride = in.layout.planes[0].stride;
    CAPTURE(name);
    CAPTURE(w);
    CAPTURE(h);
    CAPTURE(input_stride);
    auto session = device().open(name, {DRM_FORMAT_ABGR8888, w, h});
    REQUIRE(session->output().fourcc == DRM_FORMAT_ABGR8888);
    LaidOutBuffer out = paddedOutput(w, h);
    device().run(*session, in, out);
    const std::string differences = test::differingPixels(out.plane(0), expected.abgr, w, 4);
    CHECK_MESSAGE(differences.empty(), differences);
    CHECK(out.paddingWritten() == 0);
}

void checkEveryVariant(LaidOutBuffer& in, const ParamSet& set)
{
    const reference::MeanShiftResult expected = expectedOutput(in, set.params);
    for (const char* variant : variants)
        checkVariant(in, variant, set, expected);
}

// The pixels that summed at least `windows` windows.
size_t pixelsShifting(const reference::MeanShiftResult& result, int windows)
{
    return size_t(std::count_if(result.windows.begin(), result.windows.end(),
                                [&](int n) { return n >= windows; }));
}

} // namespace

TEST_CASE("every variant equals the reference on random frames for every parameter set")
{
    const uint32_t sizes[][2] = {{1, 1}, {17, 5}, {64, 37}};
    for (const auto& size : sizes) {
        for (const uint32_t padding : {unaligned_padding, aligned_padding}) {
            LaidOutBuffer in = randomFrame(size[0], size[1], padding, 3 + size[0] + padding);
            for (const auto& set : param_sets)
                checkEveryVariant(in, set);
            checkEveryVariant(in, far_set);
        }
    }
}

TEST_CASE("every variant equals the reference on flat regions with noise, where pixels shift "
          "several times")
{
    const uint32_t sizes[][2] = {{64, 37}, {321, 239}};
    for (const auto& size : sizes) {
        for (const uint32_t padding : {unaligned_padding, aligned_padding}) {
            LaidOutBuffer in = regionFrame(size[0], size[1], padding, 7 + size[0] + padding);
            for (const auto& set : param_sets) {
                const std::string set_name = set.name;
                CAPTURE(set_name);
                const reference::MeanShiftResult expected = expectedOutput(in, set.params);
                // The frame does what it is for: under every set but `once` (a single
                // shift) some pixels need three windows or more, and under the defaults
                // over a quarter need two or more.
                if (size[0] == 321 && set.params.max_iter > 1)
                    CHECK(pixelsShifting(expected, 3) > 0);
                if (size[0] == 321 && set_name == "defaults")
                    CHECK(pixelsShifting(expected, 2) * 4 > size_t(size[0]) * size[1]);
                for (const char* variant : variants)
                    checkVariant(in, variant, set, expected);
            }
        }
    }
}

TEST_CASE("windows that shift past the local variant's tile still equal the reference")
{
    // 72x61 with sp = 32: two work groups across, sixteen down; every pixel within 32 of
    // an edge shifts inwards by up to 16 pixels a shift.
    for (const uint32_t padding : {unaligned_padding, aligned_padding}) {
        LaidOutBuffer in = regionFrame(72, 61, padding, 41 + padding);
        const reference::MeanShiftResult expected = expectedOutput(in, far_set.params);
        CHECK(pixelsShifting(expected, 4) > 0);
        for (const char* variant : variants)
            checkVariant(in, variant, far_set, expected);
    }
}

TEST_CASE("under sr = 0 a flat frame keeps its colour everywhere, and every pixel its own alpha")
{
    // Every window takes every pixel, all of one colour: the mean is that colour, and
    // each pixel keeps its own alpha.
    LaidOutBuffer in = randomFrame(33, 9, unaligned_padding, 5);
    for (uint32_t y = 0; y < 9; ++y)
        for (uint32_t x = 0; x < 33; ++x) {
            uint8_t* pixel = in.rowStart(0, y) + 4 * x;
            pixel[0] = 10, pixel[1] = 200, pixel[2] = 77;
        }
    in.upload();
    const reference::MeanShiftResult expected = expectedOutput(in, param_sets[1].params);
    for (uint32_t y = 0; y < 9; ++y)
        for (uint32_t x = 0; x < 33; ++x) {
            const uint8_t* got = &expected.abgr[(size_t(y) * 33 + x) * 4];
            const uint8_t* pixel = in.rowStart(0, y) + 4 * x;
            CHECK(std::vector<uint8_t>(got, got + 4) ==
                  std::vector<uint8_t>{10, 200, 77, pixel[3]});
        }
    for (const char* variant : variants)
        checkVariant(in, variant, param_sets[1], expected);
}

TEST_CASE("means round to nearest with halves to even")
{
    // Two pixels, each window holding both (sp = 4, sr = 442): the mean colour of
    // (0, 1, 2) and (1, 2, 5) is (0.5, 1.5, 3.5), which rounds to (0, 2, 4), and the mean
    // column 0.5 to 0. The left pixel stays at column 0 and stops; the right one moves
    // there (|dx| + the colour's squared change = 1 + 2 > eps 2.5), and its second
    // window gives the same means.
    LaidOutBuffer in = randomFrame(2, 1, unaligned_padding, 13);
    const uint8_t rgb[2][3] = {{0, 1, 2}, {1, 2, 5}};
    for (uint32_t x = 0; x < 2; ++x)
        std::copy(rgb[x], rgb[x] + 3, in.rowStart(0, 0) + 4 * x);
    in.upload();
    const uint8_t* alpha = in.rowStart(0, 0) + 3;
    const std::vector<uint8_t> expected = {0, 2, 4, alpha[0], 0, 2, 4, alpha[4]};
    CHECK(expectedOutput(in, param_sets[2].params).abgr == expected);
    for (const char* variant : variants)
        checkVariant(in, variant, param_sets[2], {expected, {}});
}

TEST_CASE("meanshift followed by abgr_to_y equals the luma of the reference")
{
    const uint32_t w = 45, h = 23;
    LaidOutBuffer in = regionFrame(w, h, unaligned_padding, 29);
    auto session = device().open("meanshift-luma", {DRM_FORMAT_ABGR8888, w, h});
    CHECK(session->stageNames().size() == 2);
    REQUIRE(session->output().fourcc == DRM_FORMAT_R8);
    LaidOutBuffer out(*device().gpu, paddedLayout({DRM_FORMAT_R8, w, h}, output_padding), 0);
    device().run(*session, in, out);
    const MeanShiftParams params{3, 20, 5, 1};
    const std::vector<uint8_t> expected = reference::lumaPlane(expectedOutput(in, params).abgr);
    const std::string differences = test::differingPixels(out.plane(0), expected, w, 1);
    CHECK_MESSAGE(differences.empty(), differences);
    CHECK(out.paddingWritten() == 0);
}

TEST_CASE("meanshift refuses an input that is not ABGR8888, naming the format it got")
{
    auto session = device().tryOpen("meanshift-defaults", {DRM_FORMAT_R8, 32, 16});
    REQUIRE_FALSE(session);
    CHECK(session.error().message == "stage 1 (meanshift): input must be ABGR8888, got R8");
}

TEST_CASE("the default variant plans the packed kernel, 32x4 work groups, tileable in x and y")
{
    auto definition = device().pipelines.catalog.find("meanshift-defaults");
    REQUIRE(definition);
    const auto& stage = definition->stages[0];
    auto plan = stage.plugin->plan({DRM_FORMAT_ABGR8888, 641, 479}, stage.params);
    REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
    REQUIRE(plan->dispatch_count == 1);
    const framecl_dispatch& dispatch = plan->dispatches[0];
    CHECK(std::string(dispatch.kernel) == "meanshift_packed");
    CHECK(dispatch.global[0] == 641);
    CHECK(dispatch.global[1] == 479);
    CHECK(dispatch.local_hint[0] == 32);
    CHECK(dispatch.local_hint[1] == 4);
    CHECK(dispatch.tileable_axes == (FRAMECL_AXIS_X | FRAMECL_AXIS_Y));
    REQUIRE(dispatch.arg_count == 8);
    CHECK(dispatch.args[4].uint_value == 5);  // sp
    CHECK(dispatch.args[5].uint_value == 36); // cvRound(6²)
    CHECK(dispatch.args[6].uint_value == 5);  // max_iter
    CHECK(dispatch.args[7].uint_value == 1);  // floor(eps)
}

TEST_CASE("the plugin passes cvRound(sr²) and floor(eps), and sizes the local tile to 32 KiB")
{
    const auto planOf = [](const char* pipeline) {
        auto definition = device().pipelines.catalog.find(pipeline);
        REQUIRE(definition);
        const auto& stage = definition->stages[0];
        auto plan = stage.plugin->plan({DRM_FORMAT_ABGR8888, 100, 100}, stage.params);
        REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
        return *plan;
    };
    const auto once = planOf("meanshift-packed-once");
    CHECK(once.dispatches[0].args[5].uint_value == 240); // cvRound(240.25)
    CHECK(once.dispatches[0].args[7].uint_value == 0);
    const auto all = planOf("meanshift-local-all");
    CHECK(std::string(all.dispatches[0].kernel) == "meanshift_local");
    CHECK(all.dispatches[0].args[5].uint_value == 195364); // 442²
    CHECK(all.dispatches[0].args[7].uint_value == 2);      // floor(2.5)
    REQUIRE(all.dispatches[0].arg_count == 11);
    CHECK(all.dispatches[0].args[8].kind == FRAMECL_ARG_LOCAL);
    // sp = 4: a margin of 2 sp = 8, 48 x 20 pixels of 4 bytes.
    CHECK(all.dispatches[0].args[8].local_bytes == 48 * 20 * 4);
    CHECK(all.dispatches[0].args[9].uint_value == 8);
    CHECK(all.dispatches[0].args[10].uint_value == 48 * 20);
    // sp = 32: the margin stops at 36, the last whose 104 x 76 tile fits in 32 KiB.
    const auto far = planOf("meanshift-local-far");
    CHECK(far.dispatches[0].args[9].uint_value == 36);
    CHECK(far.dispatches[0].args[8].local_bytes == 104 * 76 * 4);
    const auto baseline = planOf("meanshift-baseline-defaults");
    CHECK(std::string(baseline.dispatches[0].kernel) == "meanshift_baseline");
    CHECK(baseline.dispatches[0].local_hint[0] == 0);
}
