// The color plugin's NV12 operations on the test device (PoCL in CI), through sessions
// on padded buffers (the UV plane apart from the Y plane), against the CPU reference of
// tests/support/reference_color.hpp: nv12_to_y exactly, nv12_to_abgr (float in the
// kernel) within 1 per channel of the reference's double arithmetic.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_color.hpp"

using namespace framecl;
using test::LaidOutBuffer;
using test::paddedLayout;
using test::YuvMatrix;
using test::YuvRange;

namespace {

const std::string test_pipelines = R"(
[[pipeline]]
name = "y"
stages = [ { plugin = "color", op = "nv12_to_y" } ]
[[pipeline]]
name = "abgr-default"
stages = [ { plugin = "color", op = "nv12_to_abgr" } ]
[[pipeline]]
name = "abgr-bt601-limited"
stages = [ { plugin = "color", op = "nv12_to_abgr", matrix = "bt601", range = "limited" } ]
[[pipeline]]
name = "abgr-bt601-full"
stages = [ { plugin = "color", op = "nv12_to_abgr", matrix = "bt601", range = "full" } ]
[[pipeline]]
name = "abgr-bt709-limited"
stages = [ { plugin = "color", op = "nv12_to_abgr", matrix = "bt709", range = "limited" } ]
[[pipeline]]
name = "abgr-bt709-full"
stages = [ { plugin = "color", op = "nv12_to_abgr", matrix = "bt709", range = "full" } ]
[[pipeline]]
name = "luma"
stages = [ { plugin = "color", op = "abgr_to_y" } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice device(test_pipelines);
    return device;
}

// NV12 needs even sizes: the issue's 1x1, 17x5, 641x479 and 1283x721, each one larger.
constexpr framecl_format nv12_sizes[] = {
    {DRM_FORMAT_NV12, 2, 2}, {DRM_FORMAT_NV12, 18, 6}, {DRM_FORMAT_NV12, 642, 480}, {DRM_FORMAT_NV12, 1284, 722}};

struct Conversion {
    const char* pipeline;
    YuvMatrix matrix;
    YuvRange range;
};

constexpr Conversion conversions[] = {
    {"abgr-bt601-limited", YuvMatrix::Bt601, YuvRange::Limited},
    {"abgr-bt601-full", YuvMatrix::Bt601, YuvRange::Full},
    {"abgr-bt709-limited", YuvMatrix::Bt709, YuvRange::Limited},
    {"abgr-bt709-full", YuvMatrix::Bt709, YuvRange::Full},
};

// Runs `pipeline` on a random NV12 frame of `nv12` (rows 7 bytes longer than the
// image, the UV plane 7 bytes after the Y plane's end) into a padded buffer of
// `out_fourcc`.
struct Ran {
    LaidOutBuffer in;
    LaidOutBuffer out;
};

Ran runPadded(const std::string& pipeline, const framecl_format& nv12, uint32_t out_fourcc, uint32_t seed)
{
    Ran ran{LaidOutBuffer(*device().gpu, paddedLayout(nv12, 7), seed),
            LaidOutBuffer(*device().gpu, paddedLayout({out_fourcc, nv12.width, nv12.height}, 5), 0)};
    auto session = device().open(pipeline, nv12);
    device().run(*session, ran.in, ran.out);
    return ran;
}

// The alpha bytes of a packed ABGR8888 plane that are not 255.
size_t alphaNotOpaque(const std::vector<uint8_t>& abgr)
{
    size_t count = 0;
    for (size_t i = 3; i < abgr.size(); i += 4)
        count += abgr[i] != 255;
    return count;
}

} // namespace

TEST_CASE("nv12_to_y copies the Y plane of a padded NV12 buffer into a padded R8 buffer at every size")
{
    uint32_t seed = 1;
    for (const framecl_format& nv12 : nv12_sizes) {
        CAPTURE(nv12.width);
        CAPTURE(nv12.height);
        Ran ran = runPadded("y", nv12, DRM_FORMAT_R8, seed++);
        CHECK(ran.out.plane(0) == ran.in.plane(0));
        CHECK(ran.out.paddingWritten() == 0);
    }
}

TEST_CASE("nv12_to_abgr is within 1 of the double-precision reference for each matrix and range at every size")
{
    uint32_t seed = 1;
    for (const Conversion& conversion : conversions) {
        for (const framecl_format& nv12 : nv12_sizes) {
            const std::string pipeline = conversion.pipeline;
            CAPTURE(pipeline);
            CAPTURE(nv12.width);
            CAPTURE(nv12.height);
            Ran ran = runPadded(conversion.pipeline, nv12, DRM_FORMAT_ABGR8888, seed++);
            const auto expected = test::nv12ToAbgr(ran.in.plane(0), ran.in.plane(1), nv12.width, nv12.height,
                                                   conversion.matrix, conversion.range);
            CHECK(test::differingPixels(ran.out.plane(0), expected, nv12.width, 4, 1) == "");
            CHECK(ran.out.paddingWritten() == 0);
        }
    }
}

TEST_CASE("nv12_to_abgr writes alpha 255 on every pixel")
{
    for (const Conversion& conversion : conversions) {
        const std::string pipeline = conversion.pipeline;
        CAPTURE(pipeline);
        Ran ran = runPadded(conversion.pipeline, {DRM_FORMAT_NV12, 642, 480}, DRM_FORMAT_ABGR8888, 3);
        CHECK(alphaNotOpaque(ran.out.plane(0)) == 0);
    }
}

TEST_CASE("nv12_to_abgr without matrix and range converts as BT.601 limited range")
{
    const framecl_format nv12{DRM_FORMAT_NV12, 642, 480};
    Ran ran = runPadded("abgr-default", nv12, DRM_FORMAT_ABGR8888, 5);
    const auto expected =
        test::nv12ToAbgr(ran.in.plane(0), ran.in.plane(1), nv12.width, nv12.height, YuvMatrix::Bt601, YuvRange::Limited);
    CHECK(test::differingPixels(ran.out.plane(0), expected, nv12.width, 4, 1) == "");
}

TEST_CASE("nv12_to_abgr gives exact black, white and grey for neutral chroma at the ends of each range")
{
    // One 2x2 block per Y code, all with Cb = Cr = 128; row 1 repeats row 0.
    struct Case {
        const char* pipeline;
        std::vector<uint8_t> luma;
        std::vector<uint8_t> grey;
    };
    const Case cases[] = {
        {"abgr-bt601-limited", {16, 16, 235, 235, 126, 126}, {0, 0, 255, 255, 128, 128}}, // (126-16)*255/219 = 128.08
        {"abgr-bt709-limited", {16, 16, 235, 235, 10, 250}, {0, 0, 255, 255, 0, 255}},    // saturated below and above
        {"abgr-bt601-full", {0, 0, 255, 255, 77, 78}, {0, 0, 255, 255, 77, 78}},
        {"abgr-bt709-full", {0, 0, 255, 255, 77, 78}, {0, 0, 255, 255, 77, 78}},
    };
    const framecl_format nv12{DRM_FORMAT_NV12, 6, 2};
    for (const Case& c : cases) {
        const std::string pipeline = c.pipeline;
        CAPTURE(pipeline);
        LaidOutBuffer in(*device().gpu, paddedLayout(nv12, 3), 1);
        LaidOutBuffer out(*device().gpu, paddedLayout({DRM_FORMAT_ABGR8888, 6, 2}, 3), 0);
        for (uint32_t y = 0; y < 2; ++y)
            std::copy(c.luma.begin(), c.luma.end(), in.rowStart(0, y));
        std::fill_n(in.rowStart(1, 0), 6, uint8_t(128));
        in.upload();
        auto session = device().open(c.pipeline, nv12);
        device().run(*session, in, out);
        std::vector<uint8_t> expected;
        for (uint32_t y = 0; y < 2; ++y)
            for (uint8_t grey : c.grey)
                expected.insert(expected.end(), {grey, grey, grey, 255});
        CHECK(out.plane(0) == expected);
    }
}

TEST_CASE("the nv12 ops refuse an input that is not NV12, naming its format")
{
    for (const std::string pipeline : {"y", "abgr-default"}) {
        CAPTURE(pipeline);
        auto session = device().tryOpen(pipeline, {DRM_FORMAT_ABGR8888, 64, 32});
        REQUIRE_FALSE(session);
        CAPTURE(session.error().message);
        CHECK(session.error().message.find("input must be NV12, got ABGR8888") != std::string::npos);
    }
}

TEST_CASE("abgr_to_y still refuses an NV12 input, naming its format")
{
    auto session = device().tryOpen("luma", {DRM_FORMAT_NV12, 64, 32});
    REQUIRE_FALSE(session);
    CAPTURE(session.error().message);
    CHECK(session.error().message.find("input must be ABGR8888, got NV12") != std::string::npos);
}
