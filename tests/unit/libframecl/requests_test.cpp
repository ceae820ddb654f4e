// libframecl's side of docs/protocol.md, "A client's life", against a scripted fake
// daemon (fake_daemon.hpp): what goes out, and what comes back to the application.

#include "client_fixture.hpp"
#include "framecl/client.hpp"

#include <cerrno>
#include <cstdlib>
#include <doctest/doctest.h>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <utility>

using framecl::test::client_timeout_ms;
using framecl::test::ConnectedClient;
using framecl::test::FakeDaemonBehaviour;
using framecl::test::frameBuffer;
using framecl::test::r8Layout;

TEST_CASE(
    "connect says Hello, binds the buffer socket with Welcome's token and lists the pipelines")
{
    ConnectedClient fixture;
    const auto log = fixture.daemon.log();
    CHECK(log.hello_names == std::vector<std::string>{"libframecl-test"});
    CHECK(log.register_tokens == std::vector<std::string>{fixture.daemon.token()});
    CHECK(log.registrations.empty());
    CHECK(std::string(framecl_device(fixture.client)) == "fake device (host-ptr)");
    REQUIRE(framecl_pipeline_count(fixture.client) == 1);
    CHECK(std::string(framecl_pipeline_name(fixture.client, 0)) == "copy");
    REQUIRE(framecl_pipeline_stage_count(fixture.client, 0) == 1);
    CHECK(std::string(framecl_pipeline_stage(fixture.client, 0, 0)) == "copy");
    CHECK(framecl_pipeline_name(fixture.client, 1) == nullptr);
}

TEST_CASE("a buffer goes to the daemon with its layout and fd, under ids counted from 1")
{
    ConnectedClient fixture;
    const framecl_frame_layout layout = r8Layout(64, 32);
    const framecl::UniqueFd fd = frameBuffer(layout);
    struct stat status;
    REQUIRE(fstat(fd.get(), &status) == 0);

    uint32_t first = 0, second = 0;
    REQUIRE(framecl_register_buffer(fixture.client, fd.get(), &layout, &first) == 0);
    REQUIRE(framecl_register_buffer(fixture.client, fd.get(), &layout, &second) == 0);
    CHECK(first == 1);
    CHECK(second == 2);

    const auto log = fixture.daemon.log();
    REQUIRE(log.registrations.size() == 2);
    CHECK(log.registrations[0].id == 1);
    CHECK(log.registrations[0].fourcc == DRM_FORMAT_R8);
    CHECK(log.registrations[0].width == 64);
    CHECK(log.registrations[0].height == 32);
    CHECK(log.registrations[0].inode == status.st_ino);
    CHECK(log.register_tokens.back() == fixture.daemon.token());
}

TEST_CASE("a buffer the daemon refuses fails with EINVAL and the daemon's reason")
{
    ConnectedClient fixture({.buffer_error = "max_buffers_per_client (64) reached"});
    const framecl_frame_layout layout = r8Layout(16, 16);
    const framecl::UniqueFd fd = frameBuffer(layout);
    uint32_t id = 0;
    CHECK(framecl_register_buffer(fixture.client, fd.get(), &layout, &id) == -EINVAL);
    CHECK(std::string(framecl_last_error(fixture.client)) == "max_buffers_per_client (64) reached");
}

TEST_CASE("an invalid layout is refused before anything is sent")
{
    ConnectedClient fixture;
    framecl_frame_layout layout = r8Layout(16, 16);
    layout.planes[0].stride = 8;
    const framecl::UniqueFd fd = frameBuffer(r8Layout(16, 16));
    uint32_t id = 0;
    CHECK(framecl_register_buffer(fixture.client, fd.get(), &layout, &id) == -EINVAL);
    CHECK(std::string(framecl_last_error(fixture.client)).find("stride") != std::string::npos);
    CHECK(fixture.daemon.log().registrations.empty());
}

TEST_CASE("opening a session gives its output layout with packed planes")
{
    ConnectedClient fixture;
    uint32_t session = 0;
    framecl_frame_layout output{};
    REQUIRE(framecl_open_session(fixture.client, "copy", DRM_FORMAT_NV12, 64, 32, nullptr, 0,
                                 &session, &output) == 0);
    CHECK(session == 1);
    CHECK(output.fourcc == DRM_FORMAT_NV12);
    CHECK(output.num_planes == 2);
    CHECK(output.planes[0].offset == 0);
    CHECK(output.planes[0].stride == 64);
    CHECK(output.planes[1].offset == 64 * 32);
    CHECK(output.planes[1].stride == 64);
}

TEST_CASE("while the daemon says what it does for a session, the wait starts again, and the status reaches the callback")
{
    // Four statuses and then the reply, each half the timeout after the one before.
    FakeDaemonBehaviour slow;
    slow.preparing_steps = 4;
    slow.preparing_interval = std::chrono::milliseconds(client_timeout_ms / 2);
    ConnectedClient fixture(slow);
    std::vector<std::string> statuses;
    framecl_set_status_callback(
        fixture.client,
        [](void* seen, const char* status) { static_cast<std::vector<std::string>*>(seen)->push_back(status); },
        &statuses);
    const auto start = std::chrono::steady_clock::now();
    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session(fixture.client, "copy", DRM_FORMAT_R8, 64, 32, nullptr, 0, &session,
                                         nullptr) == 0,
                    framecl_last_error(fixture.client));
    CHECK(std::chrono::steady_clock::now() - start > std::chrono::milliseconds(2 * client_timeout_ms));
    CHECK(statuses == std::vector<std::string>{"step 1", "step 2", "step 3", "step 4"});
}

TEST_CASE("a session's backpressure and deadline reach the daemon in OpenSession")
{
    ConnectedClient fixture;
    uint32_t session = 0;
    const framecl_session_options options{FRAMECL_BACKPRESSURE_REJECT, 2500};
    REQUIRE_MESSAGE(framecl_open_session_with(fixture.client, "copy", DRM_FORMAT_R8, 16, 16,
                                              nullptr, 0, &options, &session, nullptr) == 0,
                    framecl_last_error(fixture.client));
    const framecl_session_options drop{FRAMECL_BACKPRESSURE_DROP_OLDEST, 0};
    REQUIRE(framecl_open_session_with(fixture.client, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0,
                                      &drop, &session, nullptr) == 0);

    const auto log = fixture.daemon.log();
    REQUIRE(log.opened_options.size() == 2);
    CHECK(log.opened_options[0].backpressure == framecl::wire::Backpressure::Reject);
    CHECK(log.opened_options[0].deadline_us == 2500);
    CHECK(log.opened_options[1].backpressure == framecl::wire::Backpressure::DropOldest);
    CHECK(log.opened_options[1].deadline_us == 0);
}

TEST_CASE("a session opened without options blocks and has no deadline")
{
    ConnectedClient fixture;
    fixture.openCopySession(16, 16);
    uint32_t session = 0;
    REQUIRE(framecl_open_session_with(fixture.client, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0,
                                      nullptr, &session, nullptr) == 0);

    const auto log = fixture.daemon.log();
    REQUIRE(log.opened_options.size() == 2);
    for (const auto& options : log.opened_options) {
        CHECK(options.backpressure == framecl::wire::Backpressure::Block);
        CHECK(options.deadline_us == 0);
    }
}

TEST_CASE("an unknown backpressure is refused before anything is sent")
{
    ConnectedClient fixture;
    uint32_t session = 0;
    const framecl_session_options options{static_cast<framecl_backpressure>(7), 0};
    CHECK(framecl_open_session_with(fixture.client, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0,
                                    &options, &session, nullptr) == -EINVAL);
    CHECK(std::string(framecl_last_error(fixture.client)) ==
          "framecl_open_session: unknown backpressure 7");
    CHECK(fixture.daemon.log().opened_pipelines.empty());
}

TEST_CASE("an ErrorReply fails the request with EINVAL and the daemon's text")
{
    ConnectedClient fixture;
    uint32_t session = 0;
    const framecl_parameter radius{"radius", FRAMECL_PARAM_INT, 4, 0.0, 0, nullptr};
    CHECK(framecl_open_session(fixture.client, "nonexistent", DRM_FORMAT_R8, 16, 16, &radius, 1,
                               &session, nullptr) == -EINVAL);
    CHECK(std::string(framecl_last_error(fixture.client)) == "unknown pipeline 'nonexistent'");
}

TEST_CASE("a submitted frame comes back as a done under the application's session id")
{
    ConnectedClient fixture;
    const framecl_frame_layout layout = r8Layout(16, 16);
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t in = fixture.registerBuffer(layout);
    const uint32_t out = fixture.registerBuffer(layout);
    REQUIRE(framecl_submit(fixture.client, session, in, out, 42) == 0);

    framecl_done done;
    REQUIRE_MESSAGE(framecl_next_done(fixture.client, framecl::test::client_timeout_ms, &done) == 0,
                    framecl_last_error(fixture.client));
    CHECK(done.session == session);
    CHECK(done.sequence == 42);
    CHECK(done.status == FRAMECL_FRAME_OK);
    CHECK(done.error[0] == '\0');
    REQUIRE(done.stage_count == 1);
    CHECK(std::string(done.stages[0].stage) == "copy");
    CHECK(done.stages[0].gpu_ns == 1000);

    const auto log = fixture.daemon.log();
    REQUIRE(log.submits.size() == 1);
    CHECK(log.submits[0].session == log.opened_sessions.at(0));
    CHECK(log.submits[0].input_buffer == in);
    CHECK(log.submits[0].output_buffer == out);
}

TEST_CASE("framecl_fd is readable while a done waits, and next_done(0) then empties it")
{
    ConnectedClient fixture;
    const framecl_frame_layout layout = r8Layout(16, 16);
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(layout);
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 1) == 0);

    pollfd entry{framecl_fd(fixture.client), POLLIN, 0};
    REQUIRE(poll(&entry, 1, framecl::test::client_timeout_ms) == 1);
    framecl_done done;
    CHECK(framecl_next_done(fixture.client, 0, &done) == 0);
    CHECK(done.sequence == 1);
    CHECK(framecl_next_done(fixture.client, 0, &done) == -EAGAIN);
    CHECK(poll(&entry, 1, 0) == 0);
}

TEST_CASE("a done that arrives during another request still makes framecl_fd readable")
{
    // The library reads the Done while it waits for the reply: the Done is queued, and
    // the fd must say so (the socket it came on has nothing left to signal).
    ConnectedClient fixture;
    const framecl_frame_layout layout = r8Layout(16, 16);
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(layout);
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 7) == 0);
    char* json = nullptr;
    REQUIRE(framecl_stats(fixture.client, &json) == 0);
    std::free(json);

    pollfd entry{framecl_fd(fixture.client), POLLIN, 0};
    REQUIRE(poll(&entry, 1, framecl::test::client_timeout_ms) == 1);
    framecl_done done;
    CHECK(framecl_next_done(fixture.client, 0, &done) == 0);
    CHECK(done.sequence == 7);
}

TEST_CASE("a done that comes before a registration's reply, on the same socket, is kept")
{
    // The fake daemon answers the Submit at once, so its Done is on the buffer socket
    // ahead of the RegisterBuffersReply the library then waits for.
    ConnectedClient fixture;
    const framecl_frame_layout layout = r8Layout(16, 16);
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(layout);
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 9) == 0);
    CHECK(fixture.registerBuffer(layout) == buffer + 1);

    framecl_done done;
    REQUIRE_MESSAGE(framecl_next_done(fixture.client, 0, &done) == 0, framecl_last_error(fixture.client));
    CHECK(done.sequence == 9);
    CHECK(done.status == FRAMECL_FRAME_OK);
}

TEST_CASE("stats returns the daemon's JSON")
{
    ConnectedClient fixture;
    char* json = nullptr;
    REQUIRE(framecl_stats(fixture.client, &json) == 0);
    CHECK(std::string(json) == R"({"daemon": {"version": "0.1.0"}})");
    std::free(json);
}

TEST_CASE("a message that names its type without the table is ignored, on either socket")
{
    // Each reply and Done comes after such an Envelope, which the verifier accepts.
    ConnectedClient fixture({.empty_messages_first = true});
    const framecl_frame_layout layout = r8Layout(16, 16);
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(layout);
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 3) == 0);
    framecl_done done;
    REQUIRE_MESSAGE(framecl_next_done(fixture.client, framecl::test::client_timeout_ms, &done) == 0,
                    framecl_last_error(fixture.client));
    CHECK(done.sequence == 3);
    char* json = nullptr;
    REQUIRE_MESSAGE(framecl_stats(fixture.client, &json) == 0, framecl_last_error(fixture.client));
    CHECK(std::string(json) == R"({"daemon": {"version": "0.1.0"}})");
    std::free(json);
}

TEST_CASE("a submit names a session and buffers the client has")
{
    ConnectedClient fixture;
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));
    CHECK(framecl_submit(fixture.client, session + 1, buffer, buffer, 1) == -EINVAL);
    CHECK(framecl_submit(fixture.client, session, buffer, buffer + 1, 1) == -EINVAL);
    CHECK(std::string(framecl_last_error(fixture.client)) ==
          "no buffer " + std::to_string(buffer + 1));
    REQUIRE(framecl_release_buffer(fixture.client, buffer) == 0);
    REQUIRE(framecl_close_session(fixture.client, session) == 0);
    CHECK(framecl_submit(fixture.client, session, buffer, buffer, 1) == -EINVAL);
    CHECK(fixture.daemon.log().submits.empty());
}

TEST_CASE("disconnecting says Goodbye")
{
    ConnectedClient fixture;
    framecl_disconnect(std::exchange(fixture.client, nullptr));
    // Goodbye has no reply: wait until the fake has read it.
    for (int i = 0; i < 200 && fixture.daemon.log().goodbyes == 0; ++i)
        usleep(10000);
    CHECK(fixture.daemon.log().goodbyes == 1);
}

TEST_CASE("the C++ Client wraps a whole frame's round trip")
{
    framecl::test::TempDir dir;
    framecl::test::FakeDaemon daemon(dir.path());
    daemon.start();
    auto client =
        framecl::Client::connect({.socket_path = daemon.socketPath(), .timeout_ms = 1500});
    REQUIRE(client.pipelines().size() == 1);
    CHECK(client.pipelines()[0].name == "copy");
    const framecl::Session session = client.openSession("copy", DRM_FORMAT_R8, 16, 16);
    const framecl::UniqueFd fd = frameBuffer(session.output);
    const uint32_t buffer = client.registerBuffer(fd.get(), session.output);
    client.submit(session.id, buffer, buffer, 3);
    const auto done = client.nextDone(1500);
    REQUIRE(done);
    CHECK(done->sequence == 3);
    CHECK_FALSE(client.nextDone(0));
    CHECK_THROWS_AS(client.closeSession(session.id + 1), framecl::ClientError);
}
