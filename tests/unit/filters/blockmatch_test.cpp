// The blockmatch plugin on the test device (PoCL in CI), through sessions on padded
// buffers that run several frames each, against the CPU reference of
// daemon/reference/reference_blockmatch.hpp: every variant equals it on every byte of every
// frame, for every block, range, metric and border, at sizes that are multiples of no
// block; a session's frame is matched against the frame before it, and its first frame
// (and the first after resetState) against none.
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_blockmatch.hpp"

using namespace framecl;
using reference::BlockMatchParams;
using reference::BlockMetric;
using reference::Border;
using test::LaidOutBuffer;
using test::paddedLayout;

namespace {

constexpr const char* variants[] = {"auto", "global", "local", "packed", "tiled"};
constexpr uint8_t border_value = 77; // every pipeline's; only the constant border uses it

// Rows padded by these many bytes, and planes starting as far into their buffers: input
// strides of width + 11 and output strides of 4 x width + 5, so that three output rows of
// four start off 4-byte alignment.
constexpr uint32_t input_padding = 11;
constexpr uint32_t output_padding = 5;

// A frame size and the stage's parameters.
struct Case {
    uint32_t width;
    uint32_t height;
    BlockMatchParams params;
};

// Parameters with the pipelines' border value.
constexpr BlockMatchParams bm(int block, int range, BlockMetric metric, Border border)
{
    return {block, range, metric, border, border_value};
}

// Random frames: every block (4, 8, 13, 32), range (1, 3, 8, 32), metric and border, at
// sizes that leave blocks cut short at the right and bottom; 1x1, a frame inside one
// block whose every candidate but (0, 0) reads outside it. Range 32 only on small frames:
// each pixel costs 65² candidates.
constexpr Case random_cases[] = {
    {37, 29, bm(8, 3, BlockMetric::Sad, Border::Replicate)},
    {61, 17, bm(13, 8, BlockMetric::Ssd, Border::Reflect101)},
    {1, 1, bm(4, 1, BlockMetric::Sad, Border::Constant)},
    {1, 1, bm(32, 32, BlockMetric::Ssd, Border::Reflect101)},
    {37, 29, bm(32, 8, BlockMetric::Sad, Border::Constant)},
    {61, 17, bm(4, 1, BlockMetric::Ssd, Border::Replicate)},
    {19, 11, bm(13, 32, BlockMetric::Sad, Border::Reflect101)},
    {33, 9, bm(8, 32, BlockMetric::Ssd, Border::Constant)},
    {5, 3, bm(4, 3, BlockMetric::Ssd, Border::Constant)},
    {45, 40, bm(4, 8, BlockMetric::Sad, Border::Reflect101)},
    {29, 37, bm(13, 1, BlockMetric::Ssd, Border::Replicate)},
    {2, 7, bm(4, 3, BlockMetric::Sad, Border::Replicate)},
};

// Translated frames: each case leaves blocks whole inside the frame whose pixels all
// come from inside it at every translation of the range's edge.
constexpr Case translation_cases[] = {
    {64, 48, bm(8, 8, BlockMetric::Sad, Border::Replicate)},
    {61, 43, bm(13, 3, BlockMetric::Ssd, Border::Reflect101)},
    {45, 40, bm(4, 32, BlockMetric::Sad, Border::Constant)},
    {37, 29, bm(8, 1, BlockMetric::Ssd, Border::Constant)},
    {70, 72, bm(32, 8, BlockMetric::Ssd, Border::Replicate)},
};

// The frames of the tests of state: a third frame, resetState, two sessions.
constexpr Case sequence_case = {37, 29, bm(8, 3, BlockMetric::Sad, Border::Replicate)};

const char* metricName(BlockMetric metric)
{
    return metric == BlockMetric::Sad ? "sad" : "ssd";
}

const char* borderName(Border border)
{
    switch (border) {
    case Border::Replicate:
        return "replicate";
    case Border::Reflect101:
        return "reflect101";
    case Border::Constant:
        return "constant";
    }
    return "";
}

std::string pipelineName(const char* variant, const BlockMatchParams& p)
{
    return std::string("blockmatch-") + variant + "-" + std::to_string(p.block) + "-" + std::to_string(p.range) +
           "-" + metricName(p.metric) + "-" + borderName(p.border);
}

// One pipeline per variant and set of parameters the cases use; the defaults.
std::string testPipelines()
{
    std::vector<Case> cases(std::begin(random_cases), std::end(random_cases));
    cases.insert(cases.end(), std::begin(translation_cases), std::end(translation_cases));
    cases.push_back(sequence_case);
    std::set<std::string> written;
    std::string toml;
    for (const char* variant : variants)
        for (const Case& c : cases) {
            const std::string name = pipelineName(variant, c.params);
            if (!written.insert(name).second)
                continue;
            toml += "[[pipeline]]\nname = \"" + name + "\"\n" + "stages = [ { plugin = \"blockmatch\", block = " +
                    std::to_string(c.params.block) + ", range = " + std::to_string(c.params.range) +
                    ", metric = \"" + metricName(c.params.metric) + "\", border = \"" + borderName(c.params.border) +
                    "\", border_value = " + std::to_string(border_value) + ", variant = \"" + variant + "\" } ]\n";
        }
    toml += R"(
[[pipeline]]
name = "blockmatch-defaults"
stages = [ { plugin = "blockmatch" } ]
)";
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice opened(testPipelines());
    return opened;
}

uint32_t blockColumns(const Case& c)
{
    return uint32_t(reference::blockColumns(int(c.width), c.params.block));
}

uint32_t blockRows(const Case& c)
{
    return uint32_t(reference::blockRows(int(c.height), c.params.block));
}

// An R8 frame of noise, in every byte.
LaidOutBuffer noiseFrame(const Case& c, uint32_t seed)
{
    return LaidOutBuffer(*device().gpu, paddedLayout({DRM_FORMAT_R8, c.width, c.height}, input_padding), seed);
}

// An R8 frame of the grey levels 100 and 101 at random: most candidates of a block
// cost the same, so the rule for ties chooses.
LaidOutBuffer twoLevelFrame(const Case& c, uint32_t seed)
{
    LaidOutBuffer frame = noiseFrame(c, seed);
    for (uint32_t y = 0; y < c.height; ++y)
        for (uint32_t x = 0; x < c.width; ++x)
            frame.rowStart(0, y)[x] = uint8_t(100 + (frame.rowStart(0, y)[x] & 1));
    frame.upload();
    return frame;
}

// `from`'s content moved right by dx and down by dy: pixel (x, y) is from's
// (x - dx, y - dy), and noise where that is outside the frame.
LaidOutBuffer translatedFrame(const Case& c, LaidOutBuffer& from, int dx, int dy, uint32_t seed)
{
    LaidOutBuffer frame = noiseFrame(c, seed);
    for (int y = 0; y < int(c.height); ++y)
        for (int x = 0; x < int(c.width); ++x)
            if (x - dx >= 0 && x - dx < int(c.width) && y - dy >= 0 && y - dy < int(c.height))
                frame.rowStart(0, uint32_t(y))[x] = from.rowStart(0, uint32_t(y - dy))[x - dx];
    frame.upload();
    return frame;
}

// The reference's output for `current` after `previous` (null: after no frame).
std::vector<uint8_t> expectedMatch(LaidOutBuffer* previous, LaidOutBuffer& current, const BlockMatchParams& params)
{
    return reference::blockMatch(previous ? previous->rowStart(0, 0) : nullptr,
                            previous ? int(previous->layout.planes[0].stride) : 0, current.rowStart(0, 0),
                            int(current.layout.planes[0].stride), int(current.layout.width),
                            int(current.layout.height), params);
}

// What every first frame gives, written out rather than taken from the reference:
// (0, 0) at cost 65535 in every block.
std::vector<uint8_t> firstFrameBytes(const Case& c)
{
    std::vector<uint8_t> bytes;
    for (uint32_t i = 0; i < blockColumns(c) * blockRows(c); ++i)
        bytes.insert(bytes.end(), {0, 0, 0xff, 0xff});
    return bytes;
}

// A session of a case's pipeline for one variant: its frames, one after another, each
// into a padded output of its own.
struct Sequence {
    Case c;
    std::unique_ptr<pipeline::Session> session;

    Sequence(const char* variant, const Case& c_, const std::string& name = {})
        : c(c_), session(device().open(name.empty() ? pipelineName(variant, c_.params) : name,
                                       {DRM_FORMAT_R8, c_.width, c_.height}))
    {
        const framecl_format output = session->output();
        CHECK(output.fourcc == DRM_FORMAT_ABGR8888);
        CHECK(output.width == blockColumns(c));
        CHECK(output.height == blockRows(c));
    }

    // Runs `in` as the session's next frame and returns its output, packed; nothing
    // outside the output's rows may be written.
    std::vector<uint8_t> run(LaidOutBuffer& in)
    {
        LaidOutBuffer out(*device().gpu,
                          paddedLayout({DRM_FORMAT_ABGR8888, blockColumns(c), blockRows(c)}, output_padding), 0);
        device().run(*session, in, out);
        CHECK(out.paddingWritten() == 0);
        return out.plane(0);
    }

    // Runs `in` and compares its output with `expected` on every byte.
    void check(LaidOutBuffer& in, const std::vector<uint8_t>& expected)
    {
        const std::string differences = test::differingPixels(run(in), expected, blockColumns(c), 4);
        CHECK_MESSAGE(differences.empty(), differences);
    }
};

// Checks the vector (dx, dy) at cost 0 in every block of `got` whole inside the frame
// whose pixels all come from inside the previous frame, where noise costs more at any
// other candidate; and that there is such a block.
void checkTranslation(const std::vector<uint8_t>& got, const Case& c, int dx, int dy)
{
    const int block = c.params.block, w = int(c.width), h = int(c.height);
    size_t checked = 0, wrong = 0;
    std::string first_wrong;
    for (int by = 0; by < int(blockRows(c)); ++by)
        for (int bx = 0; bx < int(blockColumns(c)); ++bx) {
            const int x0 = bx * block, y0 = by * block;
            if (x0 + block > w || y0 + block > h || x0 - dx < 0 || x0 + block - dx > w || y0 - dy < 0 ||
                y0 + block - dy > h)
                continue;
            ++checked;
            const uint8_t* at = &got[4 * (size_t(by) * blockColumns(c) + size_t(bx))];
            if (int8_t(at[0]) == dx && int8_t(at[1]) == dy && at[2] == 0 && at[3] == 0)
                continue;
            if (wrong++ == 0)
                first_wrong = "block (" + std::to_string(bx) + ", " + std::to_string(by) + "): (" +
                              std::to_string(int8_t(at[0])) + ", " + std::to_string(int8_t(at[1])) + ") at cost " +
                              std::to_string(at[2] | at[3] << 8);
        }
    CHECK(checked > 0);
    CHECK_MESSAGE(wrong == 0,
                  wrong << " of " << checked << " blocks missed the translation; the first, " << first_wrong);
}

// Problems of a config with one blockmatch pipeline `p` whose stage has `params`,
// loaded without a device (the parameters are checked when the config loads).
std::string configProblem(const std::string& params)
{
    const auto config =
        test::pipelineConfig("[[pipeline]]\nname = \"p\"\nstages = [ { plugin = \"blockmatch\", " + params + " } ]\n");
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

TEST_CASE("the first frame of a session gives every block (0, 0) at cost 65535")
{
    const Case cases[] = {random_cases[0], random_cases[2], random_cases[3], random_cases[6], translation_cases[4]};
    uint32_t seed = 1;
    for (const char* variant : variants)
        for (const Case& c : cases) {
            const std::string pipeline = pipelineName(variant, c.params);
            CAPTURE(pipeline);
            CAPTURE(c.width);
            CAPTURE(c.height);
            LaidOutBuffer in = noiseFrame(c, seed++);
            Sequence(variant, c).check(in, firstFrameBytes(c));
        }
}

TEST_CASE("a frame translated by up to the range gives the translation in every block the border leaves alone, "
          "and equals the reference")
{
    uint32_t seed = 100;
    for (const Case& c : translation_cases) {
        const int r = c.params.range;
        // The range's corners and edges, no motion, and one more (inside the range from 3 up).
        const int translations[][2] = {{0, 0}, {r, r},  {-r, -r}, {r, -r},
                                       {-r, r}, {r, 0}, {0, -r},  {-(r + 1) / 2, r / 2}};
        for (const auto& t : translations) {
            LaidOutBuffer before = noiseFrame(c, seed++);
            LaidOutBuffer after = translatedFrame(c, before, t[0], t[1], seed++);
            const auto expected = expectedMatch(&before, after, c.params);
            for (const char* variant : variants) {
                const std::string pipeline = pipelineName(variant, c.params);
                CAPTURE(pipeline);
                CAPTURE(c.width);
                CAPTURE(c.height);
                CAPTURE(t[0]);
                CAPTURE(t[1]);
                Sequence sequence(variant, c);
                sequence.run(before);
                const auto got = sequence.run(after);
                checkTranslation(got, c, t[0], t[1]);
                const std::string differences = test::differingPixels(got, expected, blockColumns(c), 4);
                CHECK_MESSAGE(differences.empty(), differences);
            }
        }
    }
}

TEST_CASE("frames of noise, and of two grey levels full of ties, equal the reference for every block, range, "
          "metric and border")
{
    // Noise after noise; then two-level frames, after noise and after each other.
    uint32_t seed = 1000;
    for (const Case& c : random_cases) {
        LaidOutBuffer frames[] = {noiseFrame(c, seed), noiseFrame(c, seed + 1), twoLevelFrame(c, seed + 2),
                                  twoLevelFrame(c, seed + 3)};
        seed += 4;
        std::vector<std::vector<uint8_t>> expected = {firstFrameBytes(c)};
        for (size_t f = 1; f < std::size(frames); ++f)
            expected.push_back(expectedMatch(&frames[f - 1], frames[f], c.params));
        for (const char* variant : variants) {
            const std::string pipeline = pipelineName(variant, c.params);
            CAPTURE(pipeline);
            CAPTURE(c.width);
            CAPTURE(c.height);
            Sequence sequence(variant, c);
            for (size_t f = 0; f < std::size(frames); ++f) {
                CAPTURE(f);
                sequence.check(frames[f], expected[f]);
            }
        }
    }
}

TEST_CASE("a third frame is matched against the second, not the first")
{
    const Case& c = sequence_case;
    LaidOutBuffer first = noiseFrame(c, 2000), second = noiseFrame(c, 2001);
    LaidOutBuffer third = translatedFrame(c, second, 2, -1, 2002);
    const auto expected = expectedMatch(&second, third, c.params);
    // Else the test could not tell which frame the third was matched against.
    REQUIRE(expected != expectedMatch(&first, third, c.params));
    for (const char* variant : variants) {
        const std::string pipeline = pipelineName(variant, c.params);
        CAPTURE(pipeline);
        Sequence sequence(variant, c);
        sequence.check(first, firstFrameBytes(c));
        sequence.check(second, expectedMatch(&first, second, c.params));
        const auto got = sequence.run(third);
        checkTranslation(got, c, 2, -1);
        const std::string differences = test::differingPixels(got, expected, blockColumns(c), 4);
        CHECK_MESSAGE(differences.empty(), differences);
    }
}

TEST_CASE("after resetState the next frame is a first frame, and the one after it is matched against it")
{
    const Case& c = sequence_case;
    LaidOutBuffer first = noiseFrame(c, 3000), second = noiseFrame(c, 3001), third = noiseFrame(c, 3002);
    LaidOutBuffer fourth = translatedFrame(c, third, -3, 3, 3003);
    const auto expected = expectedMatch(&third, fourth, c.params);
    REQUIRE(expected != expectedMatch(&second, fourth, c.params));
    for (const char* variant : variants) {
        const std::string pipeline = pipelineName(variant, c.params);
        CAPTURE(pipeline);
        Sequence sequence(variant, c);
        sequence.check(first, firstFrameBytes(c));
        sequence.check(second, expectedMatch(&first, second, c.params));
        sequence.session->resetState();
        sequence.check(third, firstFrameBytes(c));
        sequence.check(fourth, expected);
    }
}

TEST_CASE("two sessions of one pipeline each match against their own previous frame")
{
    const Case& c = sequence_case;
    LaidOutBuffer a1 = noiseFrame(c, 4000), b1 = noiseFrame(c, 4001), a2 = translatedFrame(c, a1, 1, 2, 4002);
    for (const char* variant : variants) {
        const std::string pipeline = pipelineName(variant, c.params);
        CAPTURE(pipeline);
        Sequence a(variant, c), b(variant, c);
        a.check(a1, firstFrameBytes(c));
        b.check(b1, firstFrameBytes(c));
        a.check(a2, expectedMatch(&a1, a2, c.params));
    }
}

TEST_CASE("the defaults are block 8, range 8, sad and the replicate border")
{
    // The third frame moves by the default range's edge, dy = 8.
    const Case c{37, 29, {8, 8, BlockMetric::Sad, Border::Replicate, 0}};
    LaidOutBuffer first = noiseFrame(c, 5000), second = twoLevelFrame(c, 5001);
    LaidOutBuffer third = translatedFrame(c, second, -5, 8, 5002);
    Sequence sequence(variants[0], c, "blockmatch-defaults");
    sequence.check(first, firstFrameBytes(c));
    sequence.check(second, expectedMatch(&first, second, c.params));
    sequence.check(third, expectedMatch(&second, third, c.params));
}

TEST_CASE("a block or range out of its bounds, or an unknown metric, is a config error naming it")
{
    const std::pair<const char*, const char*> cases[] = {
        {"block = 3", "block must be between 4 and 32, got 3"},
        {"block = 33", "block must be between 4 and 32, got 33"},
        {"range = 0", "range must be between 1 and 32, got 0"},
        {"range = 33", "range must be between 1 and 32, got 33"},
        {"metric = \"mad\"", "metric must be one of sad, ssd, got 'mad'"},
    };
    for (const auto& [params, message] : cases) {
        const std::string problem = configProblem(params);
        CAPTURE(problem);
        CHECK(contains(problem, std::string("pipeline 'p', stage 1 (blockmatch): ") + message));
    }
}

TEST_CASE("blockmatch refuses an input that is not R8, naming its format")
{
    for (const auto& [fourcc, text] : {std::pair{DRM_FORMAT_NV12, "NV12"}, std::pair{DRM_FORMAT_ABGR8888, "ABGR8888"},
                                       std::pair{DRM_FORMAT_R16, "R16"}}) {
        auto session = device().tryOpen("blockmatch-defaults", {fourcc, 64, 32});
        REQUIRE_FALSE(session);
        const std::string& message = session.error().message;
        CAPTURE(message);
        CHECK(message.starts_with("stage 1 (blockmatch): input must be R8"));
        CHECK(message.ends_with(std::string("got ") + text));
    }
}
