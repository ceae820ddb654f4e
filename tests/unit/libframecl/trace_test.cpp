// framecl_trace against the fake daemon (docs/protocol.md, TraceRequest): the reply
// comes when the window closes, later than the request timeout, and the Dones that
// arrive while the library waits for it stay for framecl_next_done.

#include "client_fixture.hpp"
#include "framecl/client.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <doctest/doctest.h>
#include <memory>
#include <poll.h>
#include <string>

using framecl::test::client_timeout_ms;
using framecl::test::ConnectedClient;
using framecl::test::r8Layout;

namespace {

using Clock = std::chrono::steady_clock;
using Json = std::unique_ptr<char, decltype(&std::free)>;

} // namespace

TEST_CASE("a trace longer than the request timeout returns the TraceReply's JSON")
{
    const std::string events = R"({"traceEvents": [{"name": "sobel", "ph": "X"}]})";
    ConnectedClient fixture({.trace_json = events});
    // Past the client's timeout: the library must wait the window plus the timeout.
    constexpr uint32_t seconds = 2;
    static_assert(seconds * 1000 > client_timeout_ms);

    const auto start = Clock::now();
    char* text = nullptr;
    REQUIRE_MESSAGE(framecl_trace(fixture.client, seconds, &text) == 0,
                    framecl_last_error(fixture.client));
    const Json json(text, &std::free);
    CHECK(Clock::now() - start >= std::chrono::seconds(seconds));
    CHECK(std::string(json.get()) == events);
    CHECK(fixture.daemon.log().trace_seconds == std::vector<uint32_t>{seconds});
}

TEST_CASE("a done that arrives while a trace is awaited is kept for framecl_next_done")
{
    ConnectedClient fixture({.answer_submits = false});
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 5) == 0);

    // The fake ends the held frame when the TraceRequest comes, before it replies.
    char* text = nullptr;
    REQUIRE_MESSAGE(framecl_trace(fixture.client, 1, &text) == 0,
                    framecl_last_error(fixture.client));
    const Json json(text, &std::free);

    pollfd entry{framecl_fd(fixture.client), POLLIN, 0};
    CHECK(poll(&entry, 1, 0) == 1);
    framecl_done done;
    REQUIRE(framecl_next_done(fixture.client, 0, &done) == 0);
    CHECK(done.session == session);
    CHECK(done.sequence == 5);
    CHECK(done.status == FRAMECL_FRAME_OK);
    CHECK(framecl_next_done(fixture.client, 0, &done) == -EAGAIN);
}

TEST_CASE("a trace window outside 1 to 60 seconds is refused before anything is sent")
{
    ConnectedClient fixture;
    char* text = nullptr;
    CHECK(framecl_trace(fixture.client, 0, &text) == -EINVAL);
    CHECK(std::string(framecl_last_error(fixture.client)) ==
          "framecl_trace: seconds must be 1 to 60, not 0");
    CHECK(framecl_trace(fixture.client, 61, &text) == -EINVAL);
    CHECK(text == nullptr);
    CHECK(fixture.daemon.log().trace_seconds.empty());
}

TEST_CASE("the C++ Client's trace returns the JSON")
{
    ConnectedClient fixture;
    auto client = framecl::Client::connect(
        {.socket_path = fixture.daemon.socketPath(), .timeout_ms = client_timeout_ms});
    CHECK(client.trace(1) == framecl::test::FakeDaemonBehaviour{}.trace_json);
}
