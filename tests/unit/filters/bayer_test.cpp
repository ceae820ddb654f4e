// The bayer plugin on the test device (PoCL in CI), through sessions on padded buffers,
// against daemon/reference/reference_bayer.hpp: every Bayer format framecl holds, packed or
// not, unpacked exactly as written (the packers' round trip) and with a black level and
// white-balance gains applied exactly; and what it refuses.
#include <array>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_bayer.hpp"

using namespace framecl;
using reference::BayerSamples;
using test::LaidOutBuffer;
using reference::Packing;
using test::paddedLayout;

namespace {

const std::string test_pipelines = R"(
[[pipeline]]
name = "unpack"
stages = [ { plugin = "bayer" } ]
[[pipeline]]
name = "levels"
stages = [ { plugin = "bayer", black_level = 64, gains = [1.75, 1.0, 2.5] } ]
[[pipeline]]
name = "dark-8bit"
stages = [ { plugin = "bayer", black_level = 255 } ]
[[pipeline]]
name = "statistics"
stages = [ { plugin = "bayer", black_level = 40, gains = [2.0, 1.0, 1.5], statistics = true, saturation = 900 } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice device(test_pipelines);
    return device;
}

struct Format {
    const char* name;
    const char* order;
    uint32_t bits;
    Packing packing;
    const char* unpacked;
};

const Format formats[] = {
    {"SRGGB8", "RGGB", 8, Packing::Bytes, "SRGGB8"},      {"SBGGR8", "BGGR", 8, Packing::Bytes, "SBGGR8"},
    {"SGRBG8", "GRBG", 8, Packing::Bytes, "SGRBG8"},      {"SGBRG8", "GBRG", 8, Packing::Bytes, "SGBRG8"},
    {"SRGGB10", "RGGB", 10, Packing::Words, "SRGGB10"},   {"SBGGR10", "BGGR", 10, Packing::Words, "SBGGR10"},
    {"SGRBG10", "GRBG", 10, Packing::Words, "SGRBG10"},   {"SGBRG10", "GBRG", 10, Packing::Words, "SGBRG10"},
    {"SRGGB12", "RGGB", 12, Packing::Words, "SRGGB12"},   {"SBGGR12", "BGGR", 12, Packing::Words, "SBGGR12"},
    {"SGRBG12", "GRBG", 12, Packing::Words, "SGRBG12"},   {"SGBRG12", "GBRG", 12, Packing::Words, "SGBRG12"},
    {"SRGGB10P", "RGGB", 10, Packing::Mipi10, "SRGGB10"}, {"SBGGR10P", "BGGR", 10, Packing::Mipi10, "SBGGR10"},
    {"SGRBG10P", "GRBG", 10, Packing::Mipi10, "SGRBG10"}, {"SGBRG10P", "GBRG", 10, Packing::Mipi10, "SGBRG10"},
    {"SRGGB12P", "RGGB", 12, Packing::Mipi12, "SRGGB12"}, {"SBGGR12P", "BGGR", 12, Packing::Mipi12, "SBGGR12"},
    {"SGRBG12P", "GRBG", 12, Packing::Mipi12, "SGRBG12"}, {"SGBRG12P", "GBRG", 12, Packing::Mipi12, "SGBRG12"},
};

uint32_t fourccOf(const char* name)
{
    const uint32_t fourcc = framecl_format_from_name(name);
    REQUIRE_MESSAGE(fourcc != 0, name);
    return fourcc;
}

// Samples of every code from 0 to the largest, in a random order.
BayerSamples randomSamples(const Format& format, uint32_t width, uint32_t height, uint32_t seed)
{
    BayerSamples samples{format.order, format.bits, width, height, std::vector<uint16_t>(size_t(width) * height)};
    std::mt19937 random(seed);
    for (auto& sample : samples.samples)
        sample = uint16_t(random() & samples.maxCode());
    return samples;
}

// `samples` packed into a padded buffer of `format`; a word's bits above the samples'
// are set at random, for the kernel to ignore.
LaidOutBuffer packedInput(const Format& format, const BayerSamples& samples, uint32_t padding)
{
    LaidOutBuffer in(*device().gpu, paddedLayout({fourccOf(format.name), samples.width, samples.height}, padding), 0);
    std::mt19937 random(7);
    for (uint32_t y = 0; y < samples.height; ++y) {
        uint8_t* row = in.rowStart(0, y);
        reference::packRow(samples, y, format.packing, row);
        if (format.packing == Packing::Words)
            for (uint32_t x = 0; x < samples.width; ++x)
                row[2 * x + 1] |= uint8_t(random() << (format.bits - 8));
    }
    in.upload();
    return in;
}

// The output of pipeline `name` on `samples`, read back as samples.
BayerSamples run(const std::string& name, const Format& format, const BayerSamples& samples, uint32_t padding)
{
    LaidOutBuffer in = packedInput(format, samples, padding);
    auto session = device().open(name, {fourccOf(format.name), samples.width, samples.height});
    REQUIRE(session->output().fourcc == fourccOf(format.unpacked));
    LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), padding + 2), 0);
    device().run(*session, in, out);
    CHECK(out.paddingWritten() == 0);
    const std::vector<uint8_t> plane = out.plane(0);
    return reference::unpack(plane.data(), reference::packedRowBytes(format.bits > 8 ? Packing::Words : Packing::Bytes, samples.width),
                        format.bits > 8 ? Packing::Words : Packing::Bytes, format.order, format.bits, samples.width,
                        samples.height);
}

} // namespace

TEST_CASE("every Bayer format is unpacked to its samples, byte for byte")
{
    for (const Format& format : formats) {
        CAPTURE(format.name);
        for (const auto& [width, height, padding] : {std::tuple{36u, 6u, 3u}, std::tuple{132u, 18u, 16u}}) {
            const BayerSamples samples = randomSamples(format, width, height, width + format.bits);
            CHECK(run("unpack", format, samples, padding).samples == samples.samples);
        }
    }
}

TEST_CASE("a black level and white-balance gains are applied exactly, in every order and packing")
{
    const double gains[3] = {1.75, 1.0, 2.5};
    for (const Format& format : formats) {
        CAPTURE(format.name);
        const BayerSamples samples = randomSamples(format, 68, 10, format.bits);
        const BayerSamples expected = reference::levels(samples, 64, gains);
        const BayerSamples got = run("levels", format, samples, 5);
        for (size_t i = 0; i < got.samples.size(); ++i)
            if (got.samples[i] != expected.samples[i]) {
                FAIL_CHECK("sample (" << i % 68 << ", " << i / 68 << "): got " << got.samples[i] << ", expected "
                                      << expected.samples[i] << " from " << samples.samples[i]);
                break;
            }
    }
}

TEST_CASE("the frame's statistics equal the reference exactly, in every order and packing, at any size")
{
    for (const Format& format : formats) {
        CAPTURE(format.name);
        // Frames smaller and larger than the zone grid, with zones of unequal sizes; work
        // groups of the driver's size and of 4x2 work items (4x8 blocks, each item a column
        // of four), so that at 212x98 a zone's words gather from several groups and a
        // group's from several zones, and at 36x10 columns end inside a work item.
        for (const auto& size :
             {std::tuple{36u, 10u, std::array<size_t, 2>{0, 0}}, std::tuple{212u, 98u, std::array<size_t, 2>{0, 0}},
              std::tuple{36u, 10u, std::array<size_t, 2>{4, 2}}, std::tuple{212u, 98u, std::array<size_t, 2>{4, 2}}}) {
            // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
            const uint32_t width = std::get<0>(size), height = std::get<1>(size);
            const std::array<size_t, 2>& local = std::get<2>(size);
            CAPTURE(width);
            CAPTURE(local[0]);
            const BayerSamples samples = randomSamples(format, width, height, width + format.bits);
            LaidOutBuffer in = packedInput(format, samples, 3);
            pipeline::SessionOptions options;
            options.stage_choices = {{"", local}};
            auto session = device().open("statistics", {fourccOf(format.name), width, height}, options);
            LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), 2), 0);
            const pipeline::EnqueuedFrame frame = device().run(*session, in, out);
            REQUIRE(frame.statistics);
            const framecl_statistics expected = reference::statistics(samples, 40, 900);
            const framecl_statistics& got = *frame.statistics;
            for (uint32_t zy = 0; zy < FRAMECL_STATISTICS_ZONES_Y; ++zy)
                for (uint32_t zx = 0; zx < FRAMECL_STATISTICS_ZONES_X; ++zx)
                    for (uint32_t c = 0; c < 3; ++c) {
                        CAPTURE(zx);
                        CAPTURE(zy);
                        CAPTURE(c);
                        CHECK(got.sums[zy][zx][c] == expected.sums[zy][zx][c]);
                        CHECK(got.counts[zy][zx][c] == expected.counts[zy][zx][c]);
                    }
            for (uint32_t bin = 0; bin < FRAMECL_STATISTICS_BINS; ++bin) {
                CAPTURE(bin);
                CHECK(got.histogram[bin] == expected.histogram[bin]);
            }
            // The levels still apply.
            const double gains[3] = {2.0, 1.0, 1.5};
            const std::vector<uint8_t> plane = out.plane(0);
            const Packing unpacked = format.bits > 8 ? Packing::Words : Packing::Bytes;
            CHECK(reference::unpack(plane.data(), reference::packedRowBytes(unpacked, width), unpacked, format.order, format.bits,
                               width, height)
                      .samples == reference::levels(samples, 40, gains).samples);
        }
    }
}

TEST_CASE("bayer refuses what it cannot do, naming it")
{
    auto& dev = device();
    auto not_bayer = dev.tryOpen("unpack", {DRM_FORMAT_R8, 16, 16});
    REQUIRE_FALSE(not_bayer);
    CHECK(not_bayer.error().message.find("input must be a Bayer format (SRGGB8 ... SGBRG12P), got R8") !=
          std::string::npos);

    auto dark = dev.tryOpen("dark-8bit", {fourccOf("SRGGB8"), 16, 16});
    REQUIRE_FALSE(dark);
    CHECK(dark.error().message.find("black_level 255 is not below SRGGB8's largest code, 255") != std::string::npos);
    CHECK(dev.tryOpen("dark-8bit", {fourccOf("SRGGB10P"), 16, 16}));

    // Refused for every input format alike, so the catalog leaves the pipeline out.
    CHECK(dev.leftOut("[[pipeline]]\nname = \"two-gains\"\nstages = [ { plugin = \"bayer\", gains = [1.5, 2.0] } ]\n",
                      "two-gains")
              .find("gains has 2 values: give three, for R, G and B") != std::string::npos);
}
