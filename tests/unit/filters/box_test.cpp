// The box plugin on the test device (PoCL in CI), through sessions on padded buffers,
// against the CPU reference of daemon/reference/reference_box.hpp: every variant equals it
// on every pixel, for every border rule, at sizes that are multiples of nothing.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_box.hpp"

using namespace framecl;
using reference::Border;
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
constexpr const char* variants[] = {"auto", "direct", "separable", "rows16", "running", "sweep", "image"};
constexpr uint8_t border_value = 77; // every pipeline's; only the constant border uses it

// The windows every variant is checked with at every size and border: one pixel, even
// (the anchor off-centre), odd, neither square, and the largest, wider and higher than
// the small images.
constexpr Size windows[] = {{1, 1}, {2, 2}, {3, 3}, {5, 7}, {63, 63}};
// The image sizes: no side a multiple of 2, 4 or 16.
constexpr Size sizes[] = {{1, 1}, {17, 5}, {641, 479}, {1283, 721}};
// Windows of the hand-checked cases below.
constexpr Size other_windows[] = {{2, 1}, {1, 2}, {5, 1}, {1, 5}};

std::string pipelineName(const Size& window, const std::string& border, const std::string& variant)
{
    return "box-" + std::to_string(window.width) + "x" + std::to_string(window.height) + "-" + border + "-" + variant;
}

std::string boxPipeline(const Size& window, const char* border, const char* variant)
{
    return "[[pipeline]]\nname = \"" + pipelineName(window, border, variant) + "\"\n" +
           "stages = [ { plugin = \"box\", width = " + std::to_string(window.width) +
           ", height = " + std::to_string(window.height) + ", border = \"" + border +
           "\", border_value = " + std::to_string(border_value) + ", variant = \"" + variant + "\" } ]\n";
}

std::string testPipelines()
{
    std::string toml = R"(
[[pipeline]]
name = "y-box"
stages = [ { plugin = "color", op = "nv12_to_y" }, { plugin = "box", width = 5, height = 7, border = "reflect101" } ]
)";
    for (const char* variant : variants)
        for (const BorderRule& rule : border_rules) {
            for (const Size& window : windows)
                toml += boxPipeline(window, rule.name, variant);
            for (const Size& window : other_windows)
                toml += boxPipeline(window, rule.name, variant);
        }
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice device(testPipelines());
    return device;
}

// Runs `pipeline` on a random frame of `format` in a padded buffer, into another padded
// buffer, and returns both.
struct Ran {
    LaidOutBuffer in;
    LaidOutBuffer out;
};

// A layout of `format` whose plane starts 32 bytes into its buffer and whose stride is
// the next multiple of 16 past its row bytes (at least one byte of padding), with 32
// bytes after its last row: the 16-byte-aligned offset and stride that let rows16 take
// its aligned loads and stores.
test::PaddedLayout alignedLayout(const framecl_format& format)
{
    framecl_frame_layout layout{};
    REQUIRE(framecl_packed_layout(format.fourcc, format.width, format.height, &layout) > 0);
    layout.planes[0].offset = 32;
    layout.planes[0].stride = (test::planeRowBytes(format.fourcc, format.width) + 16) / 16 * 16;
    return {layout, 32 + size_t(layout.planes[0].stride) * format.height + 32};
}

Ran runPadded(const std::string& pipeline, const framecl_format& format, uint32_t seed, bool aligned = false)
{
    Ran ran{LaidOutBuffer(*device().gpu, aligned ? alignedLayout(format) : paddedLayout(format, 7), seed),
            LaidOutBuffer(*device().gpu, aligned ? alignedLayout(format) : paddedLayout(format, 5), 0)};
    auto session = device().open(pipeline, format);
    device().run(*session, ran.in, ran.out);
    return ran;
}

// Every window at every size under every border rule, through `variant`, equals the
// reference on every byte and writes nothing outside the output's rows.
void checkVariant(const std::string& variant, uint32_t fourcc)
{
    const uint32_t channels = fourcc == DRM_FORMAT_ABGR8888 ? 4 : 1;
    uint32_t seed = 1;
    for (const Size& image : sizes) {
        const framecl_format format{fourcc, uint32_t(image.width), uint32_t(image.height)};
        for (const Size& window : windows) {
            // 4000 reads per pixel on the CPU device: at the largest size, 43% of this
            // test's time (107 s against 61 s without, PoCL here). 641x479 takes
            // direct's 63x63 past every edge already.
            if (variant == "direct" && window.width == 63 && image.width > 641)
                continue;
            for (const BorderRule& rule : border_rules) {
                CAPTURE(format.width);
                CAPTURE(format.height);
                CAPTURE(window.width);
                CAPTURE(window.height);
                const std::string border = rule.name;
                CAPTURE(border);
                Ran ran = runPadded(pipelineName(window, border, variant), format, seed++);
                const auto expected = reference::boxFilter(ran.in.plane(0), int(format.width), int(format.height),
                                                      int(channels), {window.width, window.height, rule.border, border_value});
                CHECK(test::differingPixels(ran.out.plane(0), expected, format.width, channels) == "");
                CHECK(ran.out.paddingWritten() == 0);
            }
        }
    }
}

// An R8 frame of one row holding `pixels`, packed, run through `pipeline`.
std::vector<uint8_t> runRow(const std::string& pipeline, const std::vector<uint8_t>& pixels)
{
    const framecl_format format{DRM_FORMAT_R8, uint32_t(pixels.size()), 1};
    LaidOutBuffer in(*device().gpu, paddedLayout(format, 3), 1);
    LaidOutBuffer out(*device().gpu, paddedLayout(format, 3), 0);
    std::copy(pixels.begin(), pixels.end(), in.rowStart(0, 0));
    in.upload();
    auto session = device().open(pipeline, format);
    device().run(*session, in, out);
    return out.plane(0);
}

} // namespace

TEST_CASE("the direct variant equals the reference on R8 at every size, window and border")
{
    checkVariant("direct", DRM_FORMAT_R8);
}

TEST_CASE("the separable variant equals the reference on R8 at every size, window and border")
{
    checkVariant("separable", DRM_FORMAT_R8);
}

TEST_CASE("the direct variant equals the reference on ABGR8888 at every size, window and border, alpha too")
{
    checkVariant("direct", DRM_FORMAT_ABGR8888);
}

TEST_CASE("the separable variant equals the reference on ABGR8888 at every size, window and border, alpha too")
{
    checkVariant("separable", DRM_FORMAT_ABGR8888);
}

TEST_CASE("the rows16 variant equals the reference on R8 at every size, window and border")
{
    checkVariant("rows16", DRM_FORMAT_R8);
}

TEST_CASE("the running variant equals the reference on R8 at every size, window and border")
{
    checkVariant("running", DRM_FORMAT_R8);
}

TEST_CASE("the sweep variant equals the reference on R8 at every size, window and border")
{
    checkVariant("sweep", DRM_FORMAT_R8);
}

// The rows of each band of sweep's plan for `window` on an R8 frame of `width` x `height`.
uint32_t sweepBand(const Size& window, uint32_t width, uint32_t height)
{
    auto definition = device().pipelines.catalog.find(pipelineName(window, "replicate", "sweep"));
    REQUIRE(definition);
    auto plan = definition->stages[0].plugin->plan({DRM_FORMAT_R8, width, height}, definition->stages[0].params);
    REQUIRE(plan);
    CHECK(plan->dispatches[0].global[1] * plan->dispatches[0].args[8].uint_value >= height);
    return plan->dispatches[0].args[8].uint_value;
}

TEST_CASE("the sweep variant equals the reference in bands of several blocks, each block's loads issued a block ahead")
{
    // The frames of the cases above are small enough for bands of 8 rows, one block
    // each. Tall frames get 512 groups in taller bands: 24 and 32 rows, whose later
    // blocks use the loads the block before issued; a last band cut short.
    struct Case {
        Size window;
        Size image;
        uint32_t band;
    };
    const Case cases[] = {
        {{5, 7}, {64, 12300}, 24},   // one group across, 513 bands, the last of 12 rows
        {{63, 63}, {64, 16386}, 32}, // 513 bands, the last of 2 rows
        {{5, 7}, {961, 8200}, 32},   // three groups across, 257 bands, the last of 8 rows
    };
    uint32_t seed = 500;
    for (const Case& c : cases) {
        const framecl_format format{DRM_FORMAT_R8, uint32_t(c.image.width), uint32_t(c.image.height)};
        CAPTURE(format.width);
        CAPTURE(format.height);
        CAPTURE(c.window.width);
        REQUIRE(sweepBand(c.window, format.width, format.height) == c.band);
        for (const BorderRule& rule : border_rules) {
            const std::string border = rule.name;
            CAPTURE(border);
            Ran ran = runPadded(pipelineName(c.window, border, "sweep"), format, seed++);
            const auto expected = reference::boxFilter(ran.in.plane(0), c.image.width, c.image.height, 1,
                                                  {c.window.width, c.window.height, rule.border, border_value});
            CHECK(test::differingPixels(ran.out.plane(0), expected, format.width, 1) == "");
            CHECK(ran.out.paddingWritten() == 0);
        }
    }
}

TEST_CASE("every variant equals the reference on R8 planes with 16-byte-aligned offsets and strides")
{
    // rows16 takes its aligned uint4 loads and stores here, and running its aligned
    // 4-byte ones. 1283 = 80 x 16 + 3 leaves a last block of 3 columns (and running a
    // last work group of 3 columns); 64 x 9, every block inside the width and a last
    // block of rows cut short; 512 x 130, running's work groups each filled across and
    // a last band of 2 rows. Every window and border rule.
    const Size aligned_sizes[] = {{1283, 721}, {64, 9}, {512, 130}};
    uint32_t seed = 100;
    for (const char* variant : variants)
        for (const Size& image : aligned_sizes)
            for (const Size& window : windows)
                for (const BorderRule& rule : border_rules) {
                    if (window.width == 63 && image.width > 64 && std::string(variant) == "direct")
                        continue; // 4000 reads per pixel on the CPU device; the padded runs cover it
                    const framecl_format format{DRM_FORMAT_R8, uint32_t(image.width), uint32_t(image.height)};
                    CAPTURE(variant);
                    CAPTURE(format.width);
                    CAPTURE(window.width);
                    CAPTURE(window.height);
                    const std::string border = rule.name;
                    CAPTURE(border);
                    Ran ran = runPadded(pipelineName(window, border, variant), format, seed++, true);
                    CHECK(ran.in.layout.planes[0].stride % 16 == 0);
                    const auto expected = reference::boxFilter(ran.in.plane(0), image.width, image.height, 1,
                                                          {window.width, window.height, rule.border, border_value});
                    CHECK(test::differingPixels(ran.out.plane(0), expected, format.width, 1) == "");
                    CHECK(ran.out.paddingWritten() == 0);
                }
}

TEST_CASE("auto equals the reference on R8 and ABGR8888 at every size, window and border")
{
    checkVariant("auto", DRM_FORMAT_R8);
    checkVariant("auto", DRM_FORMAT_ABGR8888);
}

TEST_CASE("auto runs one pass on R8, two passes for the separable variant")
{
    const framecl_format format{DRM_FORMAT_R8, 17, 5};
    const auto dispatches = [&](const std::string& pipeline) {
        LaidOutBuffer in(*device().gpu, paddedLayout(format, 0), 1), out(*device().gpu, paddedLayout(format, 0), 0);
        auto session = device().open(pipeline, format);
        return device().run(*session, in, out).events.size(); // one event per dispatch
    };
    CHECK(dispatches(pipelineName({3, 3}, "replicate", "auto")) == 1); // rows16
    CHECK(dispatches(pipelineName({2, 2}, "replicate", "auto")) == 1); // rows16
    CHECK(dispatches(pipelineName({5, 7}, "replicate", "auto")) == 1); // running
    CHECK(dispatches(pipelineName({1, 5}, "replicate", "auto")) == 1);
    CHECK(dispatches(pipelineName({5, 1}, "replicate", "auto")) == 1);
    CHECK(dispatches(pipelineName({3, 3}, "replicate", "direct")) == 1);
    CHECK(dispatches(pipelineName({1, 5}, "replicate", "separable")) == 2);
}

TEST_CASE("an even box puts its extra column left of the pixel and its extra row above it, as OpenCV's anchor does")
{
    for (const std::string variant : {"direct", "separable", "rows16", "running", "sweep"}) {
        CAPTURE(variant);
        CHECK(runRow(pipelineName({2, 1}, "replicate", variant), {0, 100, 200}) == std::vector<uint8_t>{0, 50, 150});

        const framecl_format format{DRM_FORMAT_R8, 3, 2};
        LaidOutBuffer in(*device().gpu, paddedLayout(format, 2), 1), out(*device().gpu, paddedLayout(format, 2), 0);
        const uint8_t rows[2][3] = {{0, 100, 200}, {40, 40, 40}};
        for (uint32_t y = 0; y < 2; ++y)
            std::copy(rows[y], rows[y] + 3, in.rowStart(0, y));
        in.upload();
        auto session = device().open(pipelineName({1, 2}, "replicate", variant), format);
        device().run(*session, in, out);
        CHECK(out.plane(0) == std::vector<uint8_t>{0, 100, 200, 20, 70, 120});
    }
}

TEST_CASE("a mean half-way between two integers rounds up")
{
    for (const std::string variant : {"direct", "separable", "rows16", "running", "sweep"}) {
        CAPTURE(variant);
        CHECK(runRow(pipelineName({2, 1}, "replicate", variant), {0, 1, 200}) == std::vector<uint8_t>{0, 1, 101});
    }
}

TEST_CASE("reflect101 mirrors about the edge pixel without repeating it")
{
    // x = 0: columns -2..2 read 30 90 0 90 30; x = 1: 90 0 90 30 90; x = 2: 0 90 30 90 0.
    for (const std::string variant : {"direct", "separable", "rows16", "running", "sweep"}) {
        CAPTURE(variant);
        CHECK(runRow(pipelineName({5, 1}, "reflect101", variant), {0, 90, 30}) == std::vector<uint8_t>{48, 60, 42});
    }
}

TEST_CASE("a window larger than a 1x1 image sees the pixel under replicate and reflect101 and the border value "
          "under constant")
{
    for (const std::string variant : {"direct", "separable", "rows16", "running", "sweep"}) {
        CAPTURE(variant);
        CHECK(runRow(pipelineName({3, 3}, "replicate", variant), {10}) == std::vector<uint8_t>{10});
        CHECK(runRow(pipelineName({3, 3}, "reflect101", variant), {10}) == std::vector<uint8_t>{10});
        // (10 + 8 * 77) / 9 = 69.6
        CHECK(runRow(pipelineName({3, 3}, "constant", variant), {10}) == std::vector<uint8_t>{70});
    }
}

TEST_CASE("auto plans rows16 for an R8 box at most 3 wide and running for a wider one; both plan separable on "
          "ABGR8888")
{
    const auto planOf = [](const std::string& pipeline, uint32_t fourcc) {
        auto definition = device().pipelines.catalog.find(pipeline);
        REQUIRE(definition);
        const auto& stage = definition->stages[0];
        auto plan = stage.plugin->plan({fourcc, 641, 479}, stage.params);
        REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
        return *plan;
    };
    const auto r8 = planOf(pipelineName({3, 3}, "replicate", "auto"), DRM_FORMAT_R8);
    REQUIRE(r8.dispatch_count == 1);
    CHECK(std::string(r8.dispatches[0].kernel) == "box_rows16_r8");
    CHECK(r8.dispatches[0].global[0] == 41);  // 641 / 16, rounded up
    CHECK(r8.dispatches[0].global[1] == 120); // 479 / 4, rounded up
    CHECK(r8.intermediate_count == 0);
    const auto wide = planOf(pipelineName({5, 7}, "replicate", "auto"), DRM_FORMAT_R8);
    REQUIRE(wide.dispatch_count == 1);
    CHECK(std::string(wide.dispatches[0].kernel) == "box_running_r8");
    CHECK(wide.dispatches[0].global[0] == 3 * 64); // 641 / 256, rounded up, work groups of 64
    CHECK(wide.dispatches[0].local_hint[0] == 64);
    // Bands of 64 rows, halved down to 16 while the frame has fewer than 2048 groups:
    // 641x479 has 3 x 30 in bands of 16.
    CHECK(wide.dispatches[0].global[1] == 30);
    CHECK(wide.dispatches[0].args[8].uint_value == 16);
    const auto bandOf = [](uint32_t width, uint32_t height) {
        auto definition = device().pipelines.catalog.find(pipelineName({5, 7}, "replicate", "running"));
        REQUIRE(definition);
        auto plan = definition->stages[0].plugin->plan({DRM_FORMAT_R8, width, height}, definition->stages[0].params);
        REQUIRE(plan);
        CHECK(plan->dispatches[0].global[1] * plan->dispatches[0].args[8].uint_value >= height);
        return plan->dispatches[0].args[8].uint_value;
    };
    CHECK(bandOf(7680, 4320) == 32); // 30 groups across: 30 x 68 in bands of 64, 30 x 135 in 32
    CHECK(bandOf(8192, 8192) == 64); // 32 x 128
    CHECK(bandOf(1920, 1080) == 16);
    // sweep: bands of 32 rows, 8 shorter at a time down to 8 while the frame has fewer
    // than 512 groups; 480 columns a group (448 for a box over 33 wide).
    CHECK(sweepBand({5, 7}, 7680, 4320) == 32);   // 16 x 135
    CHECK(sweepBand({5, 7}, 3840, 2160) == 32);   // 8 x 68
    CHECK(sweepBand({5, 7}, 3840, 1600) == 24);   // 8 x 50 in bands of 32, 8 x 67 in 24
    CHECK(sweepBand({5, 7}, 2560, 1440) == 16);   // 6 x 60 in bands of 24, 6 x 90 in 16
    CHECK(sweepBand({5, 7}, 1920, 1080) == 8);    // 4 x 68 in bands of 16
    CHECK(sweepBand({63, 63}, 7680, 4320) == 32); // 18 x 135
    CHECK(sweepBand({63, 63}, 1920, 1080) == 8);  // 5 x 68 in bands of 16
    for (const char* variant : {"rows16", "running"}) {
        const auto abgr = planOf(pipelineName({3, 3}, "replicate", variant), DRM_FORMAT_ABGR8888);
        REQUIRE(abgr.dispatch_count == 2);
        CHECK(std::string(abgr.dispatches[0].kernel) == "box_rows_abgr");
    }
}

TEST_CASE("box refuses an input that is neither R8 nor ABGR8888, naming its format")
{
    const std::string name = pipelineName({3, 3}, "replicate", "auto");
    for (const auto& [fourcc, text] : {std::pair{DRM_FORMAT_NV12, "NV12"}, std::pair{DRM_FORMAT_R16, "R16"}}) {
        auto session = device().tryOpen(name, {fourcc, 64, 32});
        REQUIRE_FALSE(session);
        CAPTURE(session.error().message);
        CHECK(session.error().message.find(std::string("input must be R8 or ABGR8888, got ") + text) !=
              std::string::npos);
    }
}

TEST_CASE("color nv12_to_y then box runs as a two-stage pipeline on an NV12 frame")
{
    const framecl_format nv12{DRM_FORMAT_NV12, 642, 480};
    LaidOutBuffer in(*device().gpu, paddedLayout(nv12, 9), 11);
    LaidOutBuffer out(*device().gpu, paddedLayout({DRM_FORMAT_R8, 642, 480}, 5), 0);
    auto session = device().open("y-box", nv12);
    CHECK(session->stageNames().size() == 2);
    CHECK(session->output().fourcc == DRM_FORMAT_R8);
    device().run(*session, in, out);
    const auto expected = reference::boxFilter(in.plane(0), 642, 480, 1, {5, 7, Border::Reflect101, 0});
    CHECK(test::differingPixels(out.plane(0), expected, 642, 1) == "");
    CHECK(out.paddingWritten() == 0);
}
