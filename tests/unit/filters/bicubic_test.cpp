// The bicubic plugin on the test device (PoCL in CI), through sessions on padded
// buffers, against the double-precision CPU reference of
// daemon/reference/reference_bicubic.hpp. The kernels compute in float, so every variant
// must be within ±1 of the reference on every byte (a sum near a half may round either
// way), differ from it at all on few bytes (float's error moves a sum across a half
// rarely: about 1 byte in 100000 here), and equal it where every tap's fraction is 0
// (scaling to the same size returns the input). Sizes are multiples of nothing, scaled up, down,
// and up on one axis and down on the other, under every border rule, with a = -0.5 and -0.75.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_bicubic.hpp"
#include "reference_box.hpp"

using namespace framecl;
using reference::Border;
using test::LaidOutBuffer;
using test::paddedLayout;

namespace {

struct Size {
    uint32_t width;
    uint32_t height;
};

// An input size and the output size it is scaled to.
struct Scaling {
    Size in;
    Size out;
};

// No side a multiple of 4 or 16 (but the 1x1 input and a side of 1): upscales by 1.5
// and 3 (the strip kernel's vload8 path), downscales by 2 and 3 (one vload4 per
// column) and by about 20 (strip rows skipping input rows), one axis up and the other
// down, and images smaller than every tap window.
constexpr Scaling scalings[] = {
    {{1, 1}, {1, 1}},          {{1, 1}, {3, 2}},         {{17, 5}, {40, 11}},
    {{17, 5}, {7, 3}},         {{17, 5}, {9, 13}},       {{641, 479}, {320, 241}},
    {{641, 479}, {37, 23}},    {{641, 479}, {963, 719}}, {{1283, 721}, {1920, 1081}},
    {{1283, 721}, {427, 239}},
};

struct BorderRule {
    const char* name;
    Border border;
};
constexpr BorderRule border_rules[] = {{"replicate", Border::Replicate},
                                       {"reflect101", Border::Reflect101},
                                       {"constant", Border::Constant}};
constexpr uint8_t border_value = 77; // every pipeline's; only the constant border uses it

struct Coefficient {
    const char* name; // in pipeline names
    double a;
};
constexpr Coefficient coefficients[] = {{"0.5", -0.5}, {"0.75", -0.75}};

constexpr const char* variants[] = {"auto", "pixel", "strip", "image"};

// Rows padded by these many bytes, and planes starting as far into their buffers:
// strides are larger than the width and multiples of 4 for none of the sizes above.
constexpr uint32_t input_padding = 7;
constexpr uint32_t output_padding = 5;

// "bicubic-40x11-reflect101-a0.75-strip"; the size "same" for width = height = 0.
std::string pipelineName(const std::string& size, const BorderRule& rule, const Coefficient& a,
                         const std::string& variant)
{
    return "bicubic-" + size + "-" + rule.name + "-a" + a.name + "-" + variant;
}

std::string sizeName(const Size& size)
{
    return std::to_string(size.width) + "x" + std::to_string(size.height);
}

std::string stage(const Size& out, const BorderRule& rule, const Coefficient& a,
                  const std::string& variant)
{
    return "{ plugin = \"bicubic\", width = " + std::to_string(out.width) +
           ", height = " + std::to_string(out.height) + ", a = " + std::to_string(a.a) +
           ", border = \"" + rule.name + "\", border_value = " + std::to_string(border_value) +
           ", variant = \"" + variant + "\" }";
}

std::string testPipelines()
{
    std::string toml;
    for (const char* variant : variants)
        for (const BorderRule& rule : border_rules)
            for (const Coefficient& a : coefficients) {
                for (const Scaling& scaling : scalings)
                    toml += "[[pipeline]]\nname = \"" +
                            pipelineName(sizeName(scaling.out), rule, a, variant) +
                            "\"\nstages = [ " + stage(scaling.out, rule, a, variant) + " ]\n";
                // width = height = 0: the input's size.
                toml += "[[pipeline]]\nname = \"" + pipelineName("same", rule, a, variant) +
                        "\"\nstages = [ " + stage({0, 0}, rule, a, variant) + " ]\n";
            }
    toml += R"(
[[pipeline]]
name = "bicubic-2x1-up"
stages = [ { plugin = "bicubic", width = 4, height = 1 } ]
[[pipeline]]
name = "bicubic-defaults"
stages = [ { plugin = "bicubic" } ]
[[pipeline]]
name = "bicubic-width-only"
stages = [ { plugin = "bicubic", width = 40 } ]
[[pipeline]]
name = "bicubic-height-only"
stages = [ { plugin = "bicubic", height = 11 } ]
[[pipeline]]
name = "bicubic-width-16384"
stages = [ { plugin = "bicubic", width = 16384 } ]
[[pipeline]]
name = "bicubic-box"
stages = [ { plugin = "bicubic", width = 963, height = 719, border = "reflect101" },
           { plugin = "box", width = 5, height = 5, border = "reflect101" } ]
[[pipeline]]
name = "bicubic-963x719"
stages = [ { plugin = "bicubic", width = 963, height = 719, border = "reflect101" } ]
)";
    for (const char* variant : variants)
        for (const Coefficient& a : coefficients)
            toml += "[[pipeline]]\nname = \"bicubic-2x1-up-a" + std::string(a.name) + "-" +
                    variant + "\"\nstages = [ { plugin = \"bicubic\", width = 4, height = 1, a = " +
                    std::to_string(a.a) + ", variant = \"" + variant + "\" } ]\n";
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice opened(testPipelines());
    return opened;
}

uint32_t channelsOf(uint32_t fourcc)
{
    return fourcc == DRM_FORMAT_ABGR8888 ? 4 : 1;
}

// How many bytes of `got` differ from `expected` at all.
size_t differingBytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& expected)
{
    size_t count = 0;
    for (size_t i = 0; i < got.size() && i < expected.size(); ++i)
        count += got[i] != expected[i];
    return count;
}

// Runs `pipeline` on `in` into a new padded buffer of `out` (poisoned), and returns it.
LaidOutBuffer runInto(const std::string& pipeline, LaidOutBuffer& in, const framecl_format& out)
{
    LaidOutBuffer result(*device().gpu, paddedLayout(out, output_padding), 0);
    auto session = device().open(pipeline, {in.layout.fourcc, in.layout.width, in.layout.height});
    REQUIRE(session->output().fourcc == out.fourcc);
    REQUIRE(session->output().width == out.width);
    REQUIRE(session->output().height == out.height);
    device().run(*session, in, result);
    return result;
}

// Every scaling under every border rule and coefficient, each input through every
// variant: within ±1 of the reference on every byte and equal to it on all but 1 byte
// in 1000 (and 1 in any image: a kernel that rounded down, or took a half-pixel shift,
// would stay within ±1 but differ on half the bytes), nothing written outside the
// output's rows.
void checkScalings(uint32_t fourcc)
{
    const uint32_t channels = channelsOf(fourcc);
    uint32_t seed = 1;
    for (const Scaling& scaling : scalings)
        for (const BorderRule& rule : border_rules)
            for (const Coefficient& a : coefficients) {
                const std::string scaled = sizeName(scaling.in) + " to " + sizeName(scaling.out);
                const std::string border = rule.name;
                CAPTURE(scaled);
                CAPTURE(border);
                CAPTURE(a.a);
                const framecl_format in_format{fourcc, scaling.in.width, scaling.in.height};
                const framecl_format out_format{fourcc, scaling.out.width, scaling.out.height};
                LaidOutBuffer in(*device().gpu, paddedLayout(in_format, input_padding), seed++);
                const auto expected = reference::bicubicScale(
                    in.plane(0), int(scaling.in.width), int(scaling.in.height), int(channels),
                    {int(scaling.out.width), int(scaling.out.height), a.a, rule.border,
                     border_value});
                for (const std::string variant : variants) {
                    CAPTURE(variant);
                    LaidOutBuffer out = runInto(
                        pipelineName(sizeName(scaling.out), rule, a, variant), in, out_format);
                    const std::vector<uint8_t> got = out.plane(0);
                    CHECK(test::differingPixels(got, expected, scaling.out.width, channels, 1) ==
                          "");
                    CHECK(differingBytes(got, expected) <= got.size() / 1000 + 1);
                    CHECK(out.paddingWritten() == 0);
                }
            }
}

// The R8 row {0, 255} scaled to 4x1 by `pipeline`.
std::vector<uint8_t> upscaleRow(const std::string& pipeline)
{
    const framecl_format format{DRM_FORMAT_R8, 2, 1};
    LaidOutBuffer in(*device().gpu, paddedLayout(format, 3), 1);
    in.rowStart(0, 0)[0] = 0;
    in.rowStart(0, 0)[1] = 255;
    in.upload();
    return runInto(pipeline, in, {DRM_FORMAT_R8, 4, 1}).plane(0);
}

// What negotiate gives for `in` under pipeline `name`'s one stage, or its message.
Result<framecl_format> negotiated(const std::string& name, const framecl_format& in)
{
    auto definition = device().pipelines.catalog.find(name);
    REQUIRE(definition);
    const auto& stage = definition->stages[0];
    return stage.plugin->negotiate(in, stage.params);
}

} // namespace

TEST_CASE("every variant is within 1 of the reference on R8, scaled up and down, under every "
          "border and a")
{
    checkScalings(DRM_FORMAT_R8);
}

TEST_CASE("every variant is within 1 of the reference on ABGR8888, alpha too, scaled up and down, "
          "under every "
          "border and a")
{
    checkScalings(DRM_FORMAT_ABGR8888);
}

TEST_CASE("scaling to the same size returns the input unchanged: every tap's fraction is 0, its "
          "weights 0, 1, 0, 0")
{
    for (const uint32_t fourcc : {uint32_t(DRM_FORMAT_R8), uint32_t(DRM_FORMAT_ABGR8888)})
        for (const Size size : {Size{1, 1}, Size{17, 5}, Size{641, 479}})
            for (const BorderRule& rule : border_rules)
                for (const Coefficient& a : coefficients)
                    for (const std::string variant : variants) {
                        const framecl_format format{fourcc, size.width, size.height};
                        const std::string border = rule.name;
                        CAPTURE(fourcc);
                        CAPTURE(size.width);
                        CAPTURE(size.height);
                        CAPTURE(border);
                        CAPTURE(a.a);
                        CAPTURE(variant);
                        LaidOutBuffer in(*device().gpu, paddedLayout(format, input_padding),
                                         size.width + 3);
                        LaidOutBuffer out =
                            runInto(pipelineName("same", rule, a, variant), in, format);
                        CHECK(test::differingPixels(out.plane(0), in.plane(0), size.width,
                                                    channelsOf(fourcc)) == "");
                        CHECK(out.paddingWritten() == 0);
                    }
}

TEST_CASE("a row {0, 255} doubled in width gives the hand-computed values of Keys' cubic, "
          "saturated at both ends")
{
    // Samples at x = 0.25, 0.75, 1.25, 1.75 of the input (pixel centres at +0.5): t =
    // 0.75, 0.25, 0.75, 0.25 over the taps -2..1, -1..2, -1..2, 0..3, replicated. At
    // X = 1, 255 (W(1 - t) + W(2 - t)) = 255 (0.2265625 - 0.0234375) = 51.8 for
    // a = -0.5, and 255 (0.26171875 - 0.03515625) = 57.8 for a = -0.75; X = 0 is
    // 255 W(1.25) < 0 and X = 3 is 255 (1 - W(1.25)) > 255.
    for (const std::string variant : variants) {
        CAPTURE(variant);
        CHECK(upscaleRow("bicubic-2x1-up-a0.5-" + variant) ==
              std::vector<uint8_t>{0, 52, 203, 255});
        CHECK(upscaleRow("bicubic-2x1-up-a0.75-" + variant) ==
              std::vector<uint8_t>{0, 58, 197, 255});
    }
    CHECK(upscaleRow("bicubic-2x1-up") ==
          std::vector<uint8_t>{0, 52, 203, 255}); // a = -0.5 by default
}

TEST_CASE("the output format is the input's fourcc at width x height; 0 on one axis keeps the "
          "aspect ratio, on both "
          "the input's size")
{
    const auto sizeFor = [](const std::string& name, const framecl_format& in) {
        auto out = negotiated(name, in);
        REQUIRE_MESSAGE(out, (out ? "" : out.error().message));
        CHECK(out->fourcc == in.fourcc);
        return Size{out->width, out->height};
    };
    const auto same = [](Size a, Size b) { return a.width == b.width && a.height == b.height; };
    CHECK(same(sizeFor(pipelineName("40x11", border_rules[0], coefficients[0], "auto"),
                       {DRM_FORMAT_R8, 17, 5}),
               {40, 11}));
    CHECK(same(sizeFor(pipelineName("40x11", border_rules[0], coefficients[0], "auto"),
                       {DRM_FORMAT_ABGR8888, 64, 64}),
               {40, 11}));
    CHECK(same(sizeFor("bicubic-defaults", {DRM_FORMAT_R8, 17, 5}), {17, 5}));
    CHECK(same(sizeFor("bicubic-width-only", {DRM_FORMAT_R8, 17, 5}),
               {40, 12})); // 5 x 40 / 17 = 11.8
    CHECK(same(sizeFor("bicubic-height-only", {DRM_FORMAT_R8, 17, 5}),
               {37, 11})); // 17 x 11 / 5 = 37.4
    CHECK(
        same(sizeFor("bicubic-width-only", {DRM_FORMAT_R8, 1000, 1}), {40, 1})); // 0.04, at least 1
    CHECK(same(sizeFor("bicubic-width-only", {DRM_FORMAT_R8, 80, 3}), {40, 2})); // 1.5, halves up

    // A session allocates and checks its output from the negotiated format.
    const framecl_format in{DRM_FORMAT_ABGR8888, 17, 5};
    auto session = device().open("bicubic-width-only", in);
    CHECK(session->output().fourcc == DRM_FORMAT_ABGR8888);
    CHECK(session->output().width == 40);
    CHECK(session->output().height == 12);
}

TEST_CASE("bicubic refuses inputs it cannot take and outputs above 16384 on a side, saying why")
{
    for (const auto& [fourcc, text] :
         {std::pair{DRM_FORMAT_NV12, "NV12"}, std::pair{DRM_FORMAT_R16, "R16"}}) {
        auto session = device().tryOpen("bicubic-defaults", {fourcc, 64, 32});
        REQUIRE_FALSE(session);
        CAPTURE(session.error().message);
        CHECK(session.error().message.find(std::string("input must be R8 or ABGR8888, got ") +
                                           text) != std::string::npos);
    }
    const auto refusal = [](const std::string& name, const framecl_format& in) {
        auto out = negotiated(name, in);
        REQUIRE_FALSE(out);
        return out.error().message;
    };
    CHECK(refusal("bicubic-width-16384", {DRM_FORMAT_R8, 100, 200})
              .find("height 32768 (from the input's 100x200) is "
                    "above 16384") != std::string::npos);
    CHECK(refusal("bicubic-defaults", {DRM_FORMAT_R8, 20000, 8})
              .find("output 20000x8 (the input's size) is above "
                    "16384") != std::string::npos);
    CHECK(refusal(pipelineName("40x11", border_rules[0], coefficients[0], "auto"),
                  {DRM_FORMAT_R8, 65537, 2})
              .find("input 65537x2 is above 65536 on a side") != std::string::npos);
    CHECK(negotiated(pipelineName("40x11", border_rules[0], coefficients[0], "auto"),
                     {DRM_FORMAT_R8, 65536, 2})
              .has_value());
}

TEST_CASE(
    "auto plans the strip kernel: 4x8 R8 or 1x8 ABGR8888 outputs per work item, tileable in y")
{
    auto definition = device().pipelines.catalog.find(
        pipelineName("1920x1081", border_rules[0], coefficients[0], "auto"));
    REQUIRE(definition);
    const auto& stage = definition->stages[0];
    auto r8 = stage.plugin->plan({DRM_FORMAT_R8, 1283, 721}, stage.params);
    REQUIRE_MESSAGE(r8, (r8 ? "" : r8.error().message));
    REQUIRE(r8->dispatch_count == 1);
    CHECK(std::string(r8->dispatches[0].kernel) == "bicubic_strip_r8");
    CHECK(r8->dispatches[0].global[0] == 480); // 1920 / 4
    CHECK(r8->dispatches[0].global[1] == 136); // 1081 / 8, rounded up
    CHECK(r8->dispatches[0].tileable_axes == FRAMECL_AXIS_Y);

    auto abgr = stage.plugin->plan({DRM_FORMAT_ABGR8888, 1283, 721}, stage.params);
    REQUIRE_MESSAGE(abgr, (abgr ? "" : abgr.error().message));
    CHECK(std::string(abgr->dispatches[0].kernel) == "bicubic_strip_abgr");
    CHECK(abgr->dispatches[0].global[0] == 1920);
    CHECK(abgr->dispatches[0].global[1] == 136);
    CHECK(abgr->dispatches[0].tileable_axes == FRAMECL_AXIS_Y);

    auto pixel = device().pipelines.catalog.find(
        pipelineName("1920x1081", border_rules[0], coefficients[0], "pixel"));
    REQUIRE(pixel);
    auto one = pixel->stages[0].plugin->plan({DRM_FORMAT_R8, 1283, 721}, pixel->stages[0].params);
    REQUIRE_MESSAGE(one, (one ? "" : one.error().message));
    CHECK(std::string(one->dispatches[0].kernel) == "bicubic_pixel_r8");
    CHECK(one->dispatches[0].global[0] == 1920);
    CHECK(one->dispatches[0].global[1] == 1081);
    CHECK(one->dispatches[0].tileable_axes == FRAMECL_AXIS_Y);
}

TEST_CASE(
    "bicubic then box runs as a two-stage pipeline through an intermediate of the scaled size")
{
    const framecl_format in_format{DRM_FORMAT_ABGR8888, 641, 479};
    const framecl_format scaled{DRM_FORMAT_ABGR8888, 963, 719};
    LaidOutBuffer in(*device().gpu, paddedLayout(in_format, input_padding), 29);
    auto session = device().open("bicubic-box", in_format);
    CHECK(session->stageNames().size() == 2);
    CHECK(session->output().width == 963);
    CHECK(session->output().height == 719);
    LaidOutBuffer out(*device().gpu, paddedLayout(scaled, output_padding), 0);
    device().run(*session, in, out);
    CHECK(out.paddingWritten() == 0);

    // Exactly the box of the one-stage bicubic's output; within 1 of the references'
    // composition (a box mean of values each within 1 rounds to within 1).
    const LaidOutBuffer one_stage = runInto("bicubic-963x719", in, scaled);
    const reference::BoxParams box{5, 5, Border::Reflect101, 0};
    CHECK(test::differingPixels(out.plane(0), reference::boxFilter(one_stage.plane(0), 963, 719, 4, box),
                                963, 4) == "");
    const auto reference =
        reference::bicubicScale(in.plane(0), 641, 479, 4, {963, 719, -0.5, Border::Reflect101, 0});
    CHECK(test::differingPixels(out.plane(0), reference::boxFilter(reference, 963, 719, 4, box), 963, 4,
                                1) == "");
}
