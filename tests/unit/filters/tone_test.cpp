// The tone plugin on the test device (PoCL in CI), through sessions on padded buffers,
// against daemon/reference/reference_isp.hpp, exactly: the sRGB curve on every 16-bit input
// value and on random pixels, a table of the stage's own, and a table of 4096 points;
// and what it refuses.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_isp.hpp"

using namespace framecl;
using test::LaidOutBuffer;
using test::paddedLayout;

namespace {

// A gamma of 1/2.2 in 4096 points: a table as long as the stage takes.
std::string gammaTable()
{
    std::string points;
    for (int i = 0; i < 4096; ++i)
        points += (i ? ", " : "") + std::to_string(std::pow(i / 4095.0, 1 / 2.2));
    return points;
}

const std::string test_pipelines = R"(
[[pipeline]]
name = "srgb"
stages = [ { plugin = "tone" } ]
[[pipeline]]
name = "s-curve"
stages = [ { plugin = "tone", curve = "lut", lut = [0, 0.05, 0.2, 0.5, 0.8, 0.95, 1] } ]
[[pipeline]]
name = "gamma"
stages = [ { plugin = "tone", curve = "lut", lut = [)" + gammaTable() + R"(] } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice device(test_pipelines);
    return device;
}

std::vector<uint16_t> values(const std::vector<uint8_t>& bytes)
{
    std::vector<uint16_t> out(bytes.size() / 2);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

// Pipeline `name` on `in`; its output against the curve of `lut`'s points.
void check(const std::string& name, LaidOutBuffer& in, const std::vector<double>& lut)
{
    auto session = device().open(name, {DRM_FORMAT_ABGR16161616, in.layout.width, in.layout.height});
    REQUIRE(session->output().fourcc == DRM_FORMAT_ABGR8888);
    LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), 7), 0);
    device().run(*session, in, out);
    CHECK(out.paddingWritten() == 0);
    const std::vector<uint8_t> expected = reference::toneMap(values(in.plane(0)), reference::toneCurvePoints(lut));
    CHECK(test::differingPixels(out.plane(0), expected, in.layout.width, 4) == "");
}

// Every 16-bit value once, in R, G and B of 256x256 pixels (rotated between channels).
LaidOutBuffer everyValue()
{
    LaidOutBuffer in(*device().gpu, paddedLayout({DRM_FORMAT_ABGR16161616, 256, 256}, 4), 0);
    for (uint32_t y = 0; y < 256; ++y)
        for (uint32_t x = 0; x < 256; ++x) {
            const uint16_t v = uint16_t(y * 256 + x);
            const uint16_t pixel[4] = {v, uint16_t(v + 21845), uint16_t(v + 43690), uint16_t(65535 - v)};
            std::memcpy(in.rowStart(0, y) + 8 * x, pixel, 8);
        }
    in.upload();
    return in;
}

} // namespace

TEST_CASE("the sRGB curve equals the reference on every 16-bit value and on random pixels")
{
    LaidOutBuffer all = everyValue();
    check("srgb", all, {});
    LaidOutBuffer noise(*device().gpu, paddedLayout({DRM_FORMAT_ABGR16161616, 41, 9}, 3), 9);
    check("srgb", noise, {});
}

TEST_CASE("a table of the stage's own, short or of 4096 points, equals the reference")
{
    LaidOutBuffer all = everyValue();
    check("s-curve", all, {0, 0.05, 0.2, 0.5, 0.8, 0.95, 1});
    std::vector<double> gamma;
    for (int i = 0; i < 4096; ++i)
        gamma.push_back(std::stod(std::to_string(std::pow(i / 4095.0, 1 / 2.2)))); // as written in the TOML
    check("gamma", all, gamma);
}

TEST_CASE("tone refuses what it cannot do, naming it")
{
    auto wrong = device().tryOpen("srgb", {DRM_FORMAT_ABGR8888, 8, 8});
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().message.find("input must be ABGR16161616, got ABGR8888") != std::string::npos);
    const auto stage = [](const std::string& parameters) {
        return "[[pipeline]]\nname = \"bad\"\nstages = [ { plugin = \"tone\", " + parameters + " } ]\n";
    };
    CHECK(device().leftOut(stage("curve = \"lut\", lut = [0.5]"), "bad").find("curve = \"lut\" needs a lut of 2 to 4096 "
                                                                           "points, got 1") != std::string::npos);
    CHECK(device().leftOut(stage("lut = [0, 1]"), "bad").find("lut is set, but curve is \"srgb\"") != std::string::npos);
    std::string long_table = "curve = \"lut\", lut = [0";
    for (int i = 0; i < 4096; ++i)
        long_table += ", 1";
    CHECK(device().leftOut(stage(long_table + "]"), "bad").find("lut must hold 1 to 4096 numbers, got 4097") !=
          std::string::npos);
}
