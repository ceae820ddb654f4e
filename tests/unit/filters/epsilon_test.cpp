// The epsilon plugin through Session on the test device (PoCL in CI), every variant
// against the CPU reference of daemon/reference/reference_epsilon.hpp, on frames with
// padded rows. Every variant must match exactly, except half on a device with
// cl_khr_fp16, which must be within 1 on every pixel (docs/filters.md says why).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_epsilon.hpp"

using namespace framecl;
using reference::Border;
using reference::EpsilonParams;
using test::LaidOutBuffer;

namespace {

const char* const variants[] = {"auto", "baseline", "packed", "branchless", "half", "wide16", "wide16x2", "image"};
const Border borders[] = {Border::Replicate, Border::Reflect101, Border::Constant};
const int radii[] = {1, 2, 3, 4, 5, 6, 7};
const int thresholds[] = {0, 20, 255};
constexpr uint8_t border_value = 200;

// Padding of the input's and the output's rows: strides wider than the width, and
// different from each other.
constexpr uint32_t input_padding = 13;
constexpr uint32_t output_padding = 5;

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

std::string pipelineName(const std::string& variant, const EpsilonParams& params)
{
    return "epsilon-" + variant + "-" + borderName(params.border) + "-r" +
           std::to_string(params.radius) + "-t" + std::to_string(params.threshold);
}

// One pipeline per variant, border, radius and threshold under test.
std::string epsilonPipelines()
{
    std::string toml;
    for (const char* variant : variants)
        for (Border border : borders)
            for (int radius : radii)
                for (int threshold : thresholds) {
                    const EpsilonParams params{radius, threshold, border, border_value};
                    toml += "[[pipeline]]\nname = \"" + pipelineName(variant, params) +
                            "\"\nstages = [ { plugin = \"epsilon\", variant = \"" + variant +
                            "\", border = \"" + borderName(border) +
                            "\", border_value = " + std::to_string(border_value) +
                            ", radius = " + std::to_string(radius) +
                            ", threshold = " + std::to_string(threshold) + " } ]\n";
                }
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice device(epsilonPipelines());
    return device;
}

// How far a variant's pixels may be from the reference's: the half variant computes in
// half precision only where the device has cl_khr_fp16 (PoCL has not) and is within 1
// there; elsewhere it computes in float and, like every other variant, is exact.
int tolerance(const std::string& variant)
{
    return variant == "half" && device().gpu->capabilities().hasExtension("cl_khr_fp16") ? 1 : 0;
}

// `frame`'s pixels (its padding keeps what it holds, random bytes): a diagonal ramp that wraps
// from 255 to 0, plus noise of up to 24, and one pixel in 16 random. So the default
// threshold takes some neighbours and leaves others, and there are edges to keep.
void fillFrame(LaidOutBuffer& frame, uint32_t seed)
{
    const uint32_t w = frame.layout.width, h = frame.layout.height;
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> noise(-24, 24);
    for (uint32_t y = 0; y < h; ++y) {
        uint8_t* row = frame.rowStart(0, y);
        for (uint32_t x = 0; x < w; ++x) {
            const int ramp = int(3 * x + 2 * y) % 256;
            row[x] = random() % 16 == 0 ? uint8_t(random())
                                        : uint8_t(std::clamp(ramp + noise(random), 0, 255));
        }
    }
    frame.upload();
}

LaidOutBuffer inputFrame(uint32_t w, uint32_t h, uint32_t seed)
{
    LaidOutBuffer frame(*device().gpu, test::paddedLayout({DRM_FORMAT_R8, w, h}, input_padding),
                        seed);
    fillFrame(frame, seed);
    return frame;
}

// An R8 layout whose offset and stride are multiples of 16 (16 to 31 bytes of padding
// after each row, 16 before the plane and after it).
test::PaddedLayout alignedLayout(const framecl_format& format)
{
    test::PaddedLayout padded = test::paddedLayout(format, 0);
    auto& plane = padded.layout.planes[0];
    plane.offset = 16;
    plane.stride = (format.width + 15) / 16 * 16 + 16;
    padded.size = plane.offset + size_t(plane.stride) * format.height + 16;
    return padded;
}

std::vector<uint8_t> expectedOutput(const LaidOutBuffer& in, const EpsilonParams& params)
{
    return reference::epsilonPlane(in.bytes.data() + in.layout.planes[0].offset, int(in.layout.width),
                              int(in.layout.height), int(in.layout.planes[0].stride), params);
}

// The output plane of one frame of `in` through `variant`; checks that nothing outside
// the output's rows was written.
std::vector<uint8_t> filtered(const std::string& variant, const EpsilonParams& params,
                              LaidOutBuffer& in)
{
    const framecl_format format{DRM_FORMAT_R8, in.layout.width, in.layout.height};
    LaidOutBuffer out(*device().gpu, test::paddedLayout(format, output_padding), 0);
    auto session = device().open(pipelineName(variant, params), format);
    device().run(*session, in, out);
    CHECK(out.paddingWritten() == 0);
    return out.plane(0);
}

// Every variant on `in` against `expected`, within its tolerance.
void checkVariants(LaidOutBuffer& in, const EpsilonParams& params,
                   const std::vector<uint8_t>& expected)
{
    for (const char* variant : variants) {
        CAPTURE(variant);
        const std::string differences = test::differingPixels(
            filtered(variant, params, in), expected, in.layout.width, 1, tolerance(variant));
        CHECK_MESSAGE(differences.empty(), differences);
    }
}

void checkAgainstReference(uint32_t w, uint32_t h, const EpsilonParams& params, uint32_t seed)
{
    CAPTURE(w);
    CAPTURE(h);
    CAPTURE(borderName(params.border));
    CAPTURE(params.radius);
    CAPTURE(params.threshold);
    LaidOutBuffer in = inputFrame(w, h, seed);
    checkVariants(in, params, expectedOutput(in, params));
}

} // namespace

TEST_CASE("every variant matches the reference at every border on frames of 1x1, 17x5, 641x479 "
          "and 1283x721")
{
    for (const auto& [w, h] :
         {std::pair{1u, 1u}, std::pair{17u, 5u}, std::pair{641u, 479u}, std::pair{1283u, 721u}})
        for (Border border : borders)
            checkAgainstReference(w, h, {4, 20, border, border_value}, w + h);
}

TEST_CASE("every variant matches the reference at every radius, windows of 3x3 to 15x15")
{
    // The packed variants have a kernel per radius. 17x5 is narrower than the larger
    // windows: reflect101 reflects more than once.
    for (const auto& [w, h] : {std::pair{17u, 5u}, std::pair{67u, 29u}})
        for (int radius : radii)
            for (Border border : borders)
                checkAgainstReference(w, h, {radius, 20, border, border_value}, uint32_t(radius));
    for (int radius : {1, 7})
        for (Border border : borders)
            checkAgainstReference(641, 479, {radius, 20, border, border_value}, uint32_t(radius));
}

TEST_CASE("threshold 0 averages only pixels equal to the centre, so every pixel stays as it is")
{
    LaidOutBuffer in = inputFrame(67, 29, 11);
    const std::vector<uint8_t> unchanged = in.plane(0);
    for (Border border : borders) {
        CAPTURE(borderName(border));
        const EpsilonParams params{4, 0, border, border_value};
        REQUIRE(expectedOutput(in, params) == unchanged);
        checkVariants(in, params, unchanged);
    }
}

TEST_CASE("threshold 255 gives the plain box mean of the window, halves rounded up")
{
    const uint32_t w = 67, h = 29;
    LaidOutBuffer in = inputFrame(w, h, 12);
    const uint8_t* plane = in.bytes.data() + in.layout.planes[0].offset;
    const int stride = int(in.layout.planes[0].stride);
    for (Border border : borders)
        for (int radius : radii) {
            CAPTURE(borderName(border));
            CAPTURE(radius);
            std::vector<uint8_t> box;
            for (int y = 0; y < int(h); ++y)
                for (int x = 0; x < int(w); ++x) {
                    int sum = 0;
                    for (int dy = -radius; dy <= radius; ++dy)
                        for (int dx = -radius; dx <= radius; ++dx)
                            sum += reference::pixelAt(plane, int(w), int(h), stride, 1, x + dx, y + dy,
                                                 0, border, border_value);
                    const int count = (2 * radius + 1) * (2 * radius + 1);
                    box.push_back(uint8_t((2 * sum + count) / (2 * count)));
                }
            const EpsilonParams params{radius, 255, border, border_value};
            REQUIRE(expectedOutput(in, params) == box);
            checkVariants(in, params, box);
        }
}

TEST_CASE("every variant matches the reference on buffers whose offsets and strides are multiples of 16")
{
    // The wide variants' aligned path: whole 8-byte words per window row and 8- or
    // 16-byte stores. 1283 leaves a partial block at the right of each row, 1280 none;
    // 2448 rows is even, 721 odd (the last two-row item has one row inside).
    for (const auto& size : {std::pair{1283u, 721u}, std::pair{1280u, 37u}, std::pair{64u, 2448u}})
        for (Border border : borders) {
            const uint32_t w = size.first, h = size.second;
            CAPTURE(w);
            CAPTURE(h);
            CAPTURE(borderName(border));
            const EpsilonParams params{4, 20, border, border_value};
            LaidOutBuffer in(*device().gpu, alignedLayout({DRM_FORMAT_R8, w, h}), w ^ h);
            fillFrame(in, w ^ h);
            const std::vector<uint8_t> expected = expectedOutput(in, params);
            for (const char* variant : variants) {
                CAPTURE(variant);
                const framecl_format format{DRM_FORMAT_R8, w, h};
                LaidOutBuffer out(*device().gpu, alignedLayout(format), 0);
                auto session = device().open(pipelineName(variant, params), format);
                device().run(*session, in, out);
                CHECK(out.paddingWritten() == 0);
                const std::string differences =
                    test::differingPixels(out.plane(0), expected, w, 1, tolerance(variant));
                CHECK_MESSAGE(differences.empty(), differences);
            }
        }
}

TEST_CASE("auto plans the wide16x2 kernel of the radius, 16x2 pixels per work item")
{
    const auto definition = device().pipelines.catalog.find(pipelineName("auto", {}));
    REQUIRE(definition);
    const auto& stage = definition->stages[0];
    const auto plan = stage.plugin->plan({DRM_FORMAT_R8, 641, 479}, stage.params);
    REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
    CHECK(std::string(plan->dispatches[0].kernel) == "epsilon_wide16x2_r4");
    CHECK(plan->dispatches[0].global[0] == 41);
    CHECK(plan->dispatches[0].global[1] == 240);
}

TEST_CASE("negotiate refuses input that is not R8, naming the format it got")
{
    for (const auto& [fourcc, name] :
         {std::pair{DRM_FORMAT_ABGR8888, "ABGR8888"}, std::pair{DRM_FORMAT_R16, "R16"}}) {
        auto session = device().tryOpen(pipelineName("auto", {}), {fourcc, 64, 32});
        REQUIRE_FALSE(session);
        CHECK(session.error().message.ends_with(std::string("input must be R8, got ") + name));
    }
}
