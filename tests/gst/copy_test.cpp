// The framecl element with the built-in copy pipeline: every frame out equals the
// frame in, through an appsink in this process and from the command line through
// gst-launch-1.0.
#include <fstream>
#include <iterator>
#include <sstream>

#include <doctest/doctest.h>

#include "child_process.hpp"
#include "daemon_fixture.hpp"
#include "gst_test_support.hpp"
#include "test_env.hpp"

using namespace framecl::test;

namespace {

// Frames that differ from one another: the test card scrolls 7 pixels a frame.
std::string nv12Frames(int count)
{
    return "videotestsrc num-buffers=" + std::to_string(count) +
           " pattern=smpte horizontal-speed=7 ! video/x-raw,format=NV12,width=640,height=480,framerate=30/1";
}

std::vector<std::string> words(const std::string& text)
{
    std::istringstream stream(text);
    return {std::istream_iterator<std::string>(stream), std::istream_iterator<std::string>()};
}

} // namespace

TEST_CASE("copy: 300 NV12 frames through framecl equal the frames videotestsrc made")
{
    RunningDaemon daemon;
    RunningPipeline filtered(nv12Frames(300) + " ! framecl pipeline=copy socket=" + daemon.socket().string() +
                             " ! appsink name=sink sync=false max-buffers=4");
    // videotestsrc makes the same frames again: the reference, compared as they come.
    RunningPipeline reference(nv12Frames(300) + " ! appsink name=sink sync=false max-buffers=4");
    size_t frames = 0;
    while (auto expected = nextSample(reference)) {
        auto actual = nextSample(filtered);
        REQUIRE_MESSAGE(actual, "framecl ended after " << frames << " frames");
        CHECK(sampleFormat(actual->get()) == "NV12 640x480");
        REQUIRE_MESSAGE(packedFrame(actual->get()) == packedFrame(expected->get()), "frame " << frames << " differs");
        ++frames;
    }
    CHECK(frames == 300);
    CHECK_FALSE(nextSample(filtered));
}

TEST_CASE("copy from the command line: gst-launch-1.0 writes the frames videotestsrc made")
{
    RunningDaemon daemon;
    const auto output = daemon.dir() / "frames.nv12";
    std::vector<std::string> argv{requireEnv("FRAMECL_GST_LAUNCH"), "-q"};
    for (const std::string& word : words(nv12Frames(60) + " ! framecl pipeline=copy socket=" +
                                         daemon.socket().string() + " ! filesink location=" + output.string()))
        argv.push_back(word);
    const RunResult run =
        runToCompletion(argv, daemon.dir().path(), std::chrono::seconds(120),
                        {{"GST_REGISTRY", (daemon.dir() / "gst-launch-registry.bin").string()}});
    REQUIRE_MESSAGE((run.status.exited && run.status.code == 0), "gst-launch-1.0 failed:\n" << run.out << run.err);

    // NV12 640x480 has no row padding in GStreamer's layout, so filesink wrote the
    // frames exactly as packedFrame() gives them.
    std::ifstream file(output, std::ios::binary);
    const std::vector<uint8_t> written((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<uint8_t> expected;
    RunningPipeline reference(nv12Frames(60) + " ! appsink name=sink sync=false max-buffers=4");
    while (auto frame = nextSample(reference)) {
        const auto bytes = packedFrame(frame->get());
        expected.insert(expected.end(), bytes.begin(), bytes.end());
    }
    CHECK(expected.size() == 60u * 640 * 480 * 3 / 2);
    CHECK(written.size() == expected.size());
    CHECK_MESSAGE(written == expected, "the frames gst-launch-1.0 wrote differ from videotestsrc's");
}
