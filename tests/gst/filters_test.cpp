// The framecl element with real filters: the output caps are what the pipeline makes
// (another format, another size), and every frame equals the CPU reference of
// tests/support, or is within the tolerance docs/filters.md documents.
#include <cstdlib>

#include <doctest/doctest.h>

#include "daemon_fixture.hpp"
#include "gst_test_support.hpp"
#include "reference_bicubic.hpp"
#include "reference_color.hpp"

using namespace framecl::test;
using namespace framecl::reference;

namespace {

// 318 pixels wide: GStreamer pads a GRAY8 row of 318 bytes to 320, where framecl's
// packed layout would not, so the output frames have strides of GStreamer's choosing.
constexpr int source_width = 318, source_height = 240;

std::string rgbaFrames()
{
    return "videotestsrc num-buffers=30 pattern=smpte horizontal-speed=5 ! video/x-raw,format=RGBA,width=" +
           std::to_string(source_width) + ",height=" + std::to_string(source_height) + ",framerate=30/1";
}

const std::string luma_small_pipeline = "[[pipeline]]\nname = \"luma-small\"\n"
                                        "stages = [ { plugin = \"color\", op = \"abgr_to_y\" },"
                                        " { plugin = \"bicubic\", width = 160, height = 100 } ]\n";

} // namespace

TEST_CASE("luma: RGBA frames through color abgr_to_y come out GRAY8, each equal to the BT.601 reference")
{
    RunningDaemon daemon(luma_pipeline);
    RunningPipeline filtered(rgbaFrames() + " ! framecl pipeline=luma socket=" + daemon.socket().string() +
                             " ! appsink name=sink sync=false max-buffers=4");
    RunningPipeline reference(rgbaFrames() + " ! appsink name=sink sync=false max-buffers=4");
    size_t frames = 0;
    while (auto input = nextSample(reference)) {
        auto output = nextSample(filtered);
        REQUIRE_MESSAGE(output, "framecl ended after " << frames << " frames");
        REQUIRE(sampleFormat(output->get()) == "GRAY8 318x240");
        REQUIRE_MESSAGE(packedFrame(output->get()) == lumaPlane(packedFrame(input->get())),
                        "frame " << frames << " differs from the reference");
        ++frames;
    }
    CHECK(frames == 30);
}

TEST_CASE("a scaling pipeline: the output caps take the size framecld reports, and the pixels bicubic's tolerance")
{
    RunningDaemon daemon(luma_small_pipeline);
    RunningPipeline filtered(rgbaFrames() + " ! framecl pipeline=luma-small socket=" + daemon.socket().string() +
                             " ! appsink name=sink sync=false max-buffers=4");
    RunningPipeline reference(rgbaFrames() + " ! appsink name=sink sync=false max-buffers=4");
    BicubicParams scale;
    scale.width = 160;
    scale.height = 100;
    size_t frames = 0, bytes = 0, differing = 0;
    while (auto input = nextSample(reference)) {
        auto output = nextSample(filtered);
        REQUIRE_MESSAGE(output, "framecl ended after " << frames << " frames");
        REQUIRE(sampleFormat(output->get()) == "GRAY8 160x100");
        const auto expected = bicubicScale(lumaPlane(packedFrame(input->get())), source_width, source_height, 1, scale);
        const auto actual = packedFrame(output->get());
        REQUIRE(actual.size() == expected.size());
        for (size_t i = 0; i < actual.size(); ++i) {
            REQUIRE_MESSAGE(std::abs(int(actual[i]) - int(expected[i])) <= 1,
                            "frame " << frames << " byte " << i << ": " << int(actual[i]) << ", reference "
                                     << int(expected[i]));
            differing += actual[i] != expected[i];
        }
        bytes += actual.size();
        ++frames;
    }
    CHECK(frames == 30);
    // docs/filters.md, bicubic, "Precision": within 1 everywhere, all but 1 in 1000 equal.
    CHECK(differing * 1000 <= bytes);
}
