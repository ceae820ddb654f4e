// The color plugin's NV12 operations on the test device (PoCL in CI), through sessions
// on padded buffers (the UV plane apart from the Y plane), against the CPU reference of
// daemon/reference/reference_color.hpp: nv12_to_y exactly, nv12_to_abgr (float in the
// kernel) within 1 per channel of the reference's double arithmetic, and every
// nv12_to_abgr variant byte for byte as block2x2, on padded buffers and on buffers whose
// offsets and strides are multiples of 16 (the wide variants' aligned path); abgr_to_nv12
// exactly, for each matrix and range.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_color.hpp"

using namespace framecl;
using test::LaidOutBuffer;
using test::paddedLayout;
using reference::YuvMatrix;
using reference::YuvRange;

namespace {

// block2x2 first: the others must give its bytes.
const char* const variants[] = {"block2x2", "block8x2", "block16x2", "auto"};

const char* const matrix_names[] = {"bt601", "bt709"};
const char* const range_names[] = {"limited", "full"};

std::string variantPipeline(const std::string& variant, const std::string& matrix, const std::string& range)
{
    return "abgr-" + variant + "-" + matrix + "-" + range;
}

// nv12_to_abgr through every variant, matrix and range.
std::string variantPipelines()
{
    std::string toml;
    for (const char* variant : variants)
        for (const char* matrix : matrix_names)
            for (const char* range : range_names)
                toml += "[[pipeline]]\nname = \"" + variantPipeline(variant, matrix, range) +
                        "\"\nstages = [ { plugin = \"color\", op = \"nv12_to_abgr\", variant = \"" + variant +
                        "\", matrix = \"" + matrix + "\", range = \"" + range + "\" } ]\n";
    return toml;
}

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
[[pipeline]]
name = "nv12-bt601-limited"
stages = [ { plugin = "color", op = "abgr_to_nv12", matrix = "bt601", range = "limited" } ]
[[pipeline]]
name = "nv12-bt601-full"
stages = [ { plugin = "color", op = "abgr_to_nv12", matrix = "bt601", range = "full" } ]
[[pipeline]]
name = "nv12-bt709-limited"
stages = [ { plugin = "color", op = "abgr_to_nv12", matrix = "bt709", range = "limited" } ]
[[pipeline]]
name = "nv12-bt709-full"
stages = [ { plugin = "color", op = "abgr_to_nv12", matrix = "bt709", range = "full" } ]
)" + variantPipelines();

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

// A layout of `format` whose planes' offsets and strides are multiples of 16 (the wide
// variants' aligned path), with 16 to 31 bytes of padding after each row and 16 before
// each plane and after the last.
test::PaddedLayout alignedLayout(const framecl_format& format)
{
    const auto up16 = [](size_t n) { return (n + 15) / 16 * 16; };
    test::PaddedLayout padded = paddedLayout(format, 0);
    size_t end = 0;
    for (uint32_t p = 0; p < padded.layout.num_planes; ++p) {
        auto& plane = padded.layout.planes[p];
        plane.offset = uint32_t(up16(end) + 16);
        plane.stride = uint32_t(up16(test::planeRowBytes(format.fourcc, format.width)) + 16);
        end = plane.offset + size_t(plane.stride) * test::planeRows(format.fourcc, p, format.height);
    }
    padded.size = end + 16;
    return padded;
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
            const auto expected = reference::nv12ToAbgr(ran.in.plane(0), ran.in.plane(1), nv12.width, nv12.height,
                                                   conversion.matrix, conversion.range);
            CHECK(test::differingPixels(ran.out.plane(0), expected, nv12.width, 4, 1) == "");
            CHECK(ran.out.paddingWritten() == 0);
        }
    }
}

TEST_CASE("every nv12_to_abgr variant gives block2x2's bytes, within 1 of the reference, on padded and on "
          "16-byte aligned buffers")
{
    struct Case {
        framecl_format nv12;
        bool aligned;
    };
    // Aligned: 1280 wide has whole 8x2 and 16x2 blocks only; 1282 (641 blocks of 2x2)
    // leaves one block at the right of each row to the block-by-block path.
    const Case cases[] = {
        {{DRM_FORMAT_NV12, 2, 2}, false},      {{DRM_FORMAT_NV12, 18, 6}, false},
        {{DRM_FORMAT_NV12, 642, 480}, false},  {{DRM_FORMAT_NV12, 1284, 722}, false},
        {{DRM_FORMAT_NV12, 18, 6}, true},      {{DRM_FORMAT_NV12, 1282, 722}, true},
        {{DRM_FORMAT_NV12, 1280, 720}, true},
    };
    uint32_t seed = 100;
    for (size_t m = 0; m < 2; ++m)
        for (size_t r = 0; r < 2; ++r)
            for (const Case& c : cases) {
                const std::string matrix = matrix_names[m], range = range_names[r];
                CAPTURE(matrix);
                CAPTURE(range);
                CAPTURE(c.nv12.width);
                CAPTURE(c.nv12.height);
                CAPTURE(c.aligned);
                const framecl_format abgr{DRM_FORMAT_ABGR8888, c.nv12.width, c.nv12.height};
                LaidOutBuffer in(*device().gpu, c.aligned ? alignedLayout(c.nv12) : paddedLayout(c.nv12, 7), seed++);
                const auto expected = reference::nv12ToAbgr(in.plane(0), in.plane(1), c.nv12.width, c.nv12.height,
                                                       m == 0 ? YuvMatrix::Bt601 : YuvMatrix::Bt709,
                                                       r == 0 ? YuvRange::Limited : YuvRange::Full);
                std::vector<uint8_t> first;
                for (const char* variant : variants) {
                    CAPTURE(variant);
                    LaidOutBuffer out(*device().gpu, c.aligned ? alignedLayout(abgr) : paddedLayout(abgr, 5), 0);
                    auto session = device().open(variantPipeline(variant, matrix, range), c.nv12);
                    device().run(*session, in, out);
                    CHECK(test::differingPixels(out.plane(0), expected, c.nv12.width, 4, 1) == "");
                    CHECK(out.paddingWritten() == 0);
                    if (first.empty())
                        first = out.plane(0);
                    else
                        CHECK(out.plane(0) == first);
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
        reference::nv12ToAbgr(ran.in.plane(0), ran.in.plane(1), nv12.width, nv12.height, YuvMatrix::Bt601, YuvRange::Limited);
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

TEST_CASE("abgr_to_nv12 equals the reference exactly for each matrix and range, and refuses odd sizes")
{
    const Conversion to_nv12[] = {
        {"nv12-bt601-limited", YuvMatrix::Bt601, YuvRange::Limited},
        {"nv12-bt601-full", YuvMatrix::Bt601, YuvRange::Full},
        {"nv12-bt709-limited", YuvMatrix::Bt709, YuvRange::Limited},
        {"nv12-bt709-full", YuvMatrix::Bt709, YuvRange::Full},
    };
    uint32_t seed = 300;
    for (const Conversion& conversion : to_nv12)
        for (const framecl_format& size : nv12_sizes) {
            const std::string pipeline = conversion.pipeline;
            CAPTURE(pipeline);
            CAPTURE(size.width);
            const framecl_format abgr{DRM_FORMAT_ABGR8888, size.width, size.height};
            LaidOutBuffer in(*device().gpu, paddedLayout(abgr, 3), seed++);
            auto session = device().open(pipeline, abgr);
            LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), 7), 0);
            device().run(*session, in, out);
            const reference::Nv12Planes expected =
                reference::abgrToNv12(in.plane(0), size.width, size.height, conversion.matrix, conversion.range);
            CHECK(test::differingPixels(out.plane(0), expected.y, size.width, 1) == "");
            CHECK(test::differingPixels(out.plane(1), expected.uv, size.width, 2) == "");
            CHECK(out.paddingWritten() == 0);
        }
    auto odd = device().tryOpen("nv12-bt601-limited", {DRM_FORMAT_ABGR8888, 17, 5});
    REQUIRE_FALSE(odd);
    CHECK(odd.error().message.find("abgr_to_nv12 needs an even width and height, got 17x5") != std::string::npos);
}
