// The demosaic plugin on the test device (PoCL in CI), through sessions on padded
// buffers, against daemon/reference/reference_bayer.hpp, exactly: both methods on every
// order and bit depth, on random samples and on a test photograph mosaiced; the chain
// of a `bayer` stage unpacking MIPI RAW10 with levels and a demosaic; and what it
// refuses. OpenCV's own demosaicing checks the bilinear method in compare_opencv.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <stb/stb_image.h>

#include "filter_test_support.hpp"
#include "reference_bayer.hpp"
#include "test_env.hpp"

using namespace framecl;
using reference::BayerSamples;
using reference::Demosaic;
using test::LaidOutBuffer;
using reference::Packing;
using test::paddedLayout;

namespace {

const std::string test_pipelines = R"(
[[pipeline]]
name = "bilinear"
stages = [ { plugin = "demosaic", method = "bilinear" } ]
[[pipeline]]
name = "mhc"
stages = [ { plugin = "demosaic", method = "mhc" } ]
[[pipeline]]
name = "raw10-chain"
stages = [ { plugin = "bayer", black_level = 64, gains = [2.0, 1.0, 1.5] }, { plugin = "demosaic" } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice device(test_pipelines);
    return device;
}

const char* const orders[] = {"RGGB", "BGGR", "GRBG", "GBRG"};

// The unpacked Bayer format of `order` and `bits`: "S" + order + bits, V4L2's name.
uint32_t fourccOf(const std::string& order, uint32_t bits, bool packed = false)
{
    const std::string name = "S" + order + std::to_string(bits) + (packed ? "P" : "");
    const uint32_t fourcc = framecl_format_from_name(name.c_str());
    REQUIRE_MESSAGE(fourcc != 0, name);
    return fourcc;
}

struct Photo {
    uint32_t width, height;
    std::vector<uint8_t> rgba;
};

const Photo& testcard()
{
    static const Photo photo = [] {
        const std::string file = (test::requireSourceRoot() / "tests/data/testcard.png").string();
        int w = 0, h = 0, channels = 0;
        std::unique_ptr<uint8_t, void (*)(void*)> pixels(stbi_load(file.c_str(), &w, &h, &channels, 4),
                                                          stbi_image_free);
        REQUIRE_MESSAGE(pixels, file);
        return Photo{uint32_t(w), uint32_t(h), std::vector<uint8_t>(pixels.get(), pixels.get() + size_t(w) * h * 4)};
    }();
    return photo;
}

BayerSamples randomSamples(const std::string& order, uint32_t bits, uint32_t width, uint32_t height, uint32_t seed)
{
    BayerSamples samples{order, bits, width, height, std::vector<uint16_t>(size_t(width) * height)};
    std::mt19937 random(seed);
    for (auto& sample : samples.samples)
        sample = uint16_t(random() & samples.maxCode());
    return samples;
}

// Pipeline `name` on `samples` packed in `packing` (fourcc `fourcc`) into a padded
// buffer; its ABGR16161616 output as 16-bit values, 4 per pixel.
std::vector<uint16_t> run(const std::string& name, uint32_t fourcc, Packing packing, const BayerSamples& samples,
                          uint32_t padding)
{
    LaidOutBuffer in(*device().gpu, paddedLayout({fourcc, samples.width, samples.height}, padding), 0);
    for (uint32_t y = 0; y < samples.height; ++y)
        reference::packRow(samples, y, packing, in.rowStart(0, y));
    in.upload();
    auto session = device().open(name, {fourcc, samples.width, samples.height});
    REQUIRE(session->output().fourcc == DRM_FORMAT_ABGR16161616);
    LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), padding + 1), 0);
    device().run(*session, in, out);
    CHECK(out.paddingWritten() == 0);
    const std::vector<uint8_t> bytes = out.plane(0);
    std::vector<uint16_t> values(bytes.size() / 2);
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
}

// Empty when equal; else the first pixel that differs, for the test's message.
std::string firstDifference(const std::vector<uint16_t>& got, const std::vector<uint16_t>& expected, uint32_t width)
{
    if (got.size() != expected.size())
        return "sizes differ";
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != expected[i])
            return "pixel (" + std::to_string(i / 4 % width) + ", " + std::to_string(i / 4 / width) + ") channel " +
                   std::to_string(i % 4) + ": got " + std::to_string(got[i]) + ", expected " +
                   std::to_string(expected[i]);
    return {};
}

void checkMethod(const std::string& name, Demosaic method)
{
    for (const char* order : orders)
        for (uint32_t bits : {8u, 10u, 12u}) {
            CAPTURE(order);
            CAPTURE(bits);
            const Packing packing = bits == 8 ? Packing::Bytes : Packing::Words;
            const BayerSamples noise = randomSamples(order, bits, 22, 10, bits);
            const std::string noise_difference = firstDifference(run(name, fourccOf(order, bits), packing, noise, 3),
                                                                 reference::demosaic(noise, method), noise.width);
            CHECK_MESSAGE(noise_difference.empty(), "random samples: " << noise_difference);
            const Photo& photo = testcard();
            const BayerSamples mosaic = reference::mosaic(photo.rgba, photo.width, photo.height, order, bits);
            const std::string photo_difference = firstDifference(run(name, fourccOf(order, bits), packing, mosaic, 16),
                                                                 reference::demosaic(mosaic, method), mosaic.width);
            CHECK_MESSAGE(photo_difference.empty(), "testcard.png: " << photo_difference);
        }
}

} // namespace

TEST_CASE("bilinear demosaicing equals the reference in every order and bit depth") { checkMethod("bilinear", Demosaic::Bilinear); }

TEST_CASE("Malvar-He-Cutler demosaicing equals the reference in every order and bit depth") { checkMethod("mhc", Demosaic::Mhc); }

TEST_CASE("MIPI RAW10 through levels and demosaicing equals the references chained")
{
    const Photo& photo = testcard();
    const double gains[3] = {2.0, 1.0, 1.5};
    for (const char* order : orders) {
        CAPTURE(order);
        const BayerSamples raw = reference::mosaic(photo.rgba, photo.width, photo.height, order, 10);
        const std::vector<uint16_t> expected = reference::demosaic(reference::levels(raw, 64, gains), Demosaic::Mhc);
        const std::string difference =
            firstDifference(run("raw10-chain", fourccOf(order, 10, true), Packing::Mipi10, raw, 5), expected, raw.width);
        CHECK_MESSAGE(difference.empty(), difference);
    }
}

TEST_CASE("demosaic refuses packed samples and formats that are not Bayer, naming them")
{
    auto packed = device().tryOpen("mhc", {fourccOf("RGGB", 12, true), 16, 16});
    REQUIRE_FALSE(packed);
    CHECK(packed.error().message.find("input SRGGB12P is packed: demosaic reads one sample per byte or word, so "
                                      "unpack it with a `bayer` stage first") != std::string::npos);
    auto grey = device().tryOpen("mhc", {DRM_FORMAT_R8, 16, 16});
    REQUIRE_FALSE(grey);
    CHECK(grey.error().message.find("input must be a Bayer format (SRGGB8 ... SGBRG12), got R8") != std::string::npos);
}
