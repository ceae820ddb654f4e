// The sobel plugin on the test device (PoCL in CI), through sessions on padded buffers,
// against the CPU reference of daemon/reference/reference_sobel.hpp: every variant equals
// it on every pixel, for every output, norm and border rule, at sizes that are
// multiples of nothing.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_sobel.hpp"

using namespace framecl;
using reference::Border;
using test::LaidOutBuffer;
using test::paddedLayout;
using reference::SobelOutput;

namespace {

constexpr const char* variants[] = {"auto", "pixel", "row16", "block16x2", "aligned16x4", "image"};

struct OutputCase {
    const char* name;   // in pipeline names
    const char* params; // the stage's TOML
    SobelOutput output;
};
constexpr OutputCase outputs[] = {
    {"gx", "output = \"gx\"", SobelOutput::Gx},
    {"gy", "output = \"gy\"", SobelOutput::Gy},
    {"l1", "output = \"magnitude\", norm = \"l1\"", SobelOutput::MagnitudeL1},
    {"l2", "output = \"magnitude\", norm = \"l2\"", SobelOutput::MagnitudeL2},
};

struct BorderRule {
    const char* name;
    Border border;
};
constexpr BorderRule border_rules[] = {{"replicate", Border::Replicate},
                                       {"reflect101", Border::Reflect101},
                                       {"constant", Border::Constant}};
constexpr uint8_t border_value = 77; // every pipeline's; only the constant border uses it

// Rows padded by these many bytes, and planes starting as far into their buffers: input
// strides of width + 11 and output strides of 2 x width + 5 (R16) or width + 5 (R8) are
// multiples of 16 for none of the sizes below, and R16 rows start at odd addresses.
constexpr uint32_t input_padding = 11;
constexpr uint32_t output_padding = 5;

std::string pipelineName(const char* variant, const OutputCase& output, const BorderRule& rule)
{
    return std::string("sobel-") + variant + "-" + output.name + "-" + rule.name;
}

// One pipeline per variant, output and border rule; the defaults; sobel then copy.
std::string testPipelines()
{
    std::string toml;
    for (const char* variant : variants)
        for (const auto& output : outputs)
            for (const auto& rule : border_rules)
                toml += "[[pipeline]]\nname = \"" + pipelineName(variant, output, rule) + "\"\n" +
                        "stages = [ { plugin = \"sobel\", " + output.params + ", border = \"" +
                        rule.name + "\", border_value = " + std::to_string(border_value) +
                        ", variant = \"" + variant + "\" } ]\n";
    toml += R"(
[[pipeline]]
name = "sobel-defaults"
stages = [ { plugin = "sobel" } ]
[[pipeline]]
name = "sobel-gx-copy"
stages = [ { plugin = "sobel", output = "gx" }, { plugin = "copy" } ]
)";
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice opened(testPipelines());
    return opened;
}

uint32_t outputFourcc(SobelOutput output)
{
    return output == SobelOutput::Gx || output == SobelOutput::Gy ? DRM_FORMAT_R16 : DRM_FORMAT_R8;
}

LaidOutBuffer paddedInput(uint32_t width, uint32_t height, uint32_t seed)
{
    return LaidOutBuffer(*device().gpu, paddedLayout({DRM_FORMAT_R8, width, height}, input_padding),
                         seed);
}

LaidOutBuffer paddedOutput(uint32_t fourcc, uint32_t width, uint32_t height)
{
    return LaidOutBuffer(*device().gpu, paddedLayout({fourcc, width, height}, output_padding), 0);
}

// A layout of `format` whose plane starts 32 bytes into its buffer and whose stride is
// the next multiple of 16 past its row bytes (at least one byte of padding), with 32
// bytes after its last row: the 16-byte-aligned offset and stride that let the
// aligned16x4 variant take its aligned loads and stores.
test::PaddedLayout alignedLayout(const framecl_format& format)
{
    framecl_frame_layout layout{};
    REQUIRE(framecl_packed_layout(format.fourcc, format.width, format.height, &layout) > 0);
    layout.planes[0].offset = 32;
    layout.planes[0].stride = (test::planeRowBytes(format.fourcc, format.width) + 16) / 16 * 16;
    return {layout, 32 + size_t(layout.planes[0].stride) * format.height + 32};
}

// The reference's output for the R8 plane of `in`.
std::vector<uint8_t> expectedOutput(LaidOutBuffer& in, SobelOutput output, Border border, uint8_t value)
{
    return reference::sobelPlane(in.rowStart(0, 0), int(in.layout.width), int(in.layout.height),
                            int(in.layout.planes[0].stride), output, border, value);
}

// Runs the test's pipeline for `variant`, `output` and `rule` on `in` and compares
// every pixel with the reference; nothing outside the output's rows may be written.
void checkAgainstReference(LaidOutBuffer& in, const char* variant, const OutputCase& output,
                           const BorderRule& rule, bool aligned_output = false)
{
    const std::string name = pipelineName(variant, output, rule);
    const uint32_t w = in.layout.width, h = in.layout.height;
    CAPTURE(name);
    CAPTURE(w);
    CAPTURE(h);
    const uint32_t fourcc = outputFourcc(output.output);
    auto session = device().open(name, {DRM_FORMAT_R8, w, h});
    REQUIRE(session->output().fourcc == fourcc);
    LaidOutBuffer out = aligned_output
                            ? LaidOutBuffer(*device().gpu, alignedLayout({fourcc, w, h}), 0)
                            : paddedOutput(fourcc, w, h);
    device().run(*session, in, out);

    const std::string differences =
        test::differingPixels(out.plane(0), expectedOutput(in, output.output, rule.border, border_value),
                              w, fourcc == DRM_FORMAT_R16 ? 2 : 1);
    CHECK_MESSAGE(differences.empty(), differences);
    CHECK(out.paddingWritten() == 0);
}

} // namespace

TEST_CASE("every variant equals the reference for every output, norm and border on small frames")
{
    // 35x7 also gives the wide variants work items inside the frame, beside ones at its
    // edges, under every border rule.
    const uint32_t sizes[][2] = {{1, 1}, {17, 5}, {35, 7}};
    for (const auto& size : sizes) {
        LaidOutBuffer in = paddedInput(size[0], size[1], 11 + size[0]);
        for (const char* variant : variants)
            for (const auto& output : outputs)
                for (const auto& rule : border_rules)
                    checkAgainstReference(in, variant, output, rule);
    }
}

TEST_CASE("every variant equals the reference for every output and norm on large frames")
{
    // One border rule per run, taking turns, so that each size still meets every rule.
    const uint32_t sizes[][2] = {{641, 479}, {1283, 721}};
    size_t turn = 0;
    for (const auto& size : sizes) {
        LaidOutBuffer in = paddedInput(size[0], size[1], 5 + size[0]);
        for (const char* variant : variants)
            for (const auto& output : outputs)
                checkAgainstReference(in, variant, output,
                                      border_rules[turn++ % std::size(border_rules)]);
    }
}

TEST_CASE("every variant equals the reference on 16-byte-aligned planes, for every output "
          "and border")
{
    // Offsets and strides that are multiples of 16, in and out: aligned16x4 takes its
    // aligned uint4 loads and stores. 1283 = 80 x 16 + 3 leaves a last block of 3
    // columns for the one-pixel path; 64 x 9, every block inside the width and a last
    // block of rows cut short. Every variant, since all must run on any layout.
    const uint32_t sizes[][2] = {{1283, 721}, {64, 9}};
    for (const auto& size : sizes) {
        LaidOutBuffer in(*device().gpu, alignedLayout({DRM_FORMAT_R8, size[0], size[1]}),
                         3 + size[0]);
        for (const char* variant : variants)
            for (const auto& output : outputs)
                for (const auto& rule : border_rules)
                    checkAgainstReference(in, variant, output, rule, true);
    }
}

TEST_CASE("gx and gy are R16 planes holding negative gradients in two's complement")
{
    // 40x5 frames with one edge from 200 to 0. The pixels on either side of it have the
    // gradient 4 x (0 - 200) = -800, 0xFCE0, stored low byte first; all others 0.
    const uint32_t w = 40, h = 5;
    const std::vector<uint8_t> minus_800 = {0xE0, 0xFC}, zero = {0, 0};
    LaidOutBuffer left_bright = paddedInput(w, h, 1); // columns 0-19 at 200: gx at x = 19, 20
    LaidOutBuffer top_bright = paddedInput(w, h, 2);  // rows 0-1 at 200: gy at y = 1, 2
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            left_bright.rowStart(0, y)[x] = x < 20 ? 200 : 0;
            top_bright.rowStart(0, y)[x] = y < 2 ? 200 : 0;
        }
    left_bright.upload();
    top_bright.upload();

    for (const char* variant : variants) {
        CAPTURE(variant);
        auto gx = device().open(pipelineName(variant, outputs[0], border_rules[0]),
                                {DRM_FORMAT_R8, w, h});
        auto gy = device().open(pipelineName(variant, outputs[1], border_rules[0]),
                                {DRM_FORMAT_R8, w, h});
        CHECK(gx->output().fourcc == DRM_FORMAT_R16);
        CHECK(gy->output().fourcc == DRM_FORMAT_R16);
        LaidOutBuffer gx_out = paddedOutput(DRM_FORMAT_R16, w, h);
        LaidOutBuffer gy_out = paddedOutput(DRM_FORMAT_R16, w, h);
        device().run(*gx, left_bright, gx_out);
        device().run(*gy, top_bright, gy_out);
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                CAPTURE(x);
                CAPTURE(y);
                const uint8_t* gx_at = gx_out.rowStart(0, y) + 2 * x;
                const uint8_t* gy_at = gy_out.rowStart(0, y) + 2 * x;
                CHECK(std::vector<uint8_t>(gx_at, gx_at + 2) ==
                      (x == 19 || x == 20 ? minus_800 : zero));
                CHECK(std::vector<uint8_t>(gy_at, gy_at + 2) ==
                      (y == 1 || y == 2 ? minus_800 : zero));
            }
    }
}

TEST_CASE("sobel refuses an input that is not R8, naming the format it got")
{
    auto session = device().tryOpen("sobel-defaults", {DRM_FORMAT_NV12, 32, 16});
    REQUIRE_FALSE(session);
    CHECK(session.error().message == "stage 1 (sobel): input must be R8, got NV12");
}

TEST_CASE(
    "the default variant plans the 16x4 kernel, one work item per 16x4 outputs, tileable in y")
{
    auto definition = device().pipelines.catalog.find("sobel-defaults");
    REQUIRE(definition);
    const auto& stage = definition->stages[0];
    auto plan = stage.plugin->plan({DRM_FORMAT_R8, 641, 479}, stage.params);
    REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
    REQUIRE(plan->dispatch_count == 1);
    CHECK(std::string(plan->dispatches[0].kernel) == "sobel_aligned16x4");
    CHECK(plan->dispatches[0].global[0] == 41);  // 641 / 16, rounded up
    CHECK(plan->dispatches[0].global[1] == 120); // 479 / 4, rounded up
    CHECK(plan->dispatches[0].tileable_axes == FRAMECL_AXIS_Y);
}

TEST_CASE("sobel output=gx followed by copy runs as a two-stage pipeline")
{
    const uint32_t w = 37, h = 11;
    LaidOutBuffer in = paddedInput(w, h, 23);
    LaidOutBuffer out = paddedOutput(DRM_FORMAT_R16, w, h);
    auto session = device().open("sobel-gx-copy", {DRM_FORMAT_R8, w, h});
    CHECK(session->stageNames().size() == 2);
    REQUIRE(session->output().fourcc == DRM_FORMAT_R16);
    device().run(*session, in, out);
    const std::string differences = test::differingPixels(
        out.plane(0), expectedOutput(in, SobelOutput::Gx, Border::Replicate, 0), w, 2);
    CHECK_MESSAGE(differences.empty(), differences);
    CHECK(out.paddingWritten() == 0);
}
