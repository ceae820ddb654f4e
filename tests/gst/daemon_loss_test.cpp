// framecld killed under a streaming framecl element: the pipeline ends with an error
// message on the bus within the element's timeout instead of hanging, and once the
// daemon is back the next start of the pipeline (READY to PAUSED) is served again.
#include <chrono>
#include <csignal>

#include <doctest/doctest.h>

#include "daemon_fixture.hpp"
#include "gst_test_support.hpp"

using namespace framecl::test;
using namespace std::chrono_literals;

namespace {

constexpr auto timeout = 2000ms; // the element's timeout-ms

// A moving picture that two pipelines make alike from their starts: not `smpte`, whose
// corner of snow comes from a random state that a restart does not reset.
std::string nv12Frames()
{
    return "videotestsrc pattern=ball ! video/x-raw,format=NV12,width=320,height=240,framerate=30/1";
}

} // namespace

TEST_CASE("framecld killed mid-stream: an ERROR from framecl on the bus within the timeout; restarted, it serves again")
{
    RunningDaemon daemon;
    // The sink drops what it is not asked for, so the stream runs on into the dead
    // daemon instead of waiting for the test.
    RunningPipeline stream(nv12Frames() + " ! framecl name=filter pipeline=copy timeout-ms=" +
                           std::to_string(timeout.count()) + " socket=" + daemon.socket().string() +
                           " ! appsink name=sink sync=false drop=true max-buffers=1");
    for (int frame = 0; frame < 10; ++frame)
        REQUIRE_MESSAGE(nextSample(stream), "frame " << frame << " did not come");

    daemon.stop(SIGKILL);
    const auto killed = std::chrono::steady_clock::now();
    // The frame in flight comes back lost at once; a submit after the loss waits for a
    // reconnection at most the timeout. The rest is slack for a loaded machine.
    auto error = stream.waitFor(GST_MESSAGE_ERROR, timeout + 5s);
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed);
    REQUIRE_MESSAGE(error, "no error on the bus " << waited.count() << " ms after framecld was killed");
    MESSAGE("the error came " << waited.count() << " ms after the kill: " << errorText(error->get()));
    CHECK(GST_MESSAGE_SRC(error->get()) == GST_OBJECT(stream.element("filter")));
    CHECK(errorText(error->get()).find("framecld") != std::string::npos);

    // Every frame now, in order, to compare with videotestsrc's from its start.
    daemon.start();
    g_object_set(stream.element("sink"), "drop", FALSE, "max-buffers", 4, nullptr);
    const auto stopping = std::chrono::steady_clock::now();
    stream.restart();
    CHECK(std::chrono::steady_clock::now() - stopping < timeout + 5s);
    RunningPipeline reference(nv12Frames() + " ! appsink name=sink sync=false max-buffers=4");
    for (int frame = 0; frame < 10; ++frame) {
        auto expected = nextSample(reference);
        auto actual = nextSample(stream);
        REQUIRE_MESSAGE(actual, "no frame " << frame << " after the restart: " << stream.firstError());
        REQUIRE_MESSAGE(packedFrame(actual->get()) == packedFrame(expected->get()),
                        "frame " << frame << " after the restart differs");
    }
}
