// docs/protocol.md, "When a side dies", the daemon's side: frames in flight come back
// lost, and the library restores the connection under the ids the application holds.

#include "client_fixture.hpp"

#include <cerrno>
#include <chrono>
#include <doctest/doctest.h>
#include <filesystem>
#include <iterator>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <vector>

using framecl::test::client_timeout_ms;
using framecl::test::ConnectedClient;
using framecl::test::r8Layout;

namespace {

using Clock = std::chrono::steady_clock;

// Margin for a loaded CI machine: a bound, not a speed claim.
constexpr auto restart_margin = std::chrono::milliseconds(2000);

} // namespace

TEST_CASE("when the daemon goes away, frames in flight come back lost, in submission order")
{
    ConnectedClient fixture({.answer_submits = false});
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 1) == 0);
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 2) == 0);

    fixture.daemon.stop();
    pollfd entry{framecl_fd(fixture.client), POLLIN, 0};
    REQUIRE(poll(&entry, 1, client_timeout_ms) == 1);

    framecl_done done;
    REQUIRE(framecl_next_done(fixture.client, 0, &done) == 0);
    CHECK(done.session == session);
    CHECK(done.sequence == 1);
    CHECK(done.status == FRAMECL_FRAME_LOST);
    CHECK(std::string(done.error) == "framecld went away; the frame was lost");
    REQUIRE(framecl_next_done(fixture.client, 0, &done) == 0);
    CHECK(done.sequence == 2);
    CHECK(done.status == FRAMECL_FRAME_LOST);
    // Not waiting, not reconnecting: the daemon is away.
    CHECK(framecl_next_done(fixture.client, 0, &done) == -ENOTCONN);
}

TEST_CASE("after a daemon restart, buffers and sessions are back under the same ids")
{
    ConnectedClient fixture({.answer_submits = false});
    const framecl_frame_layout layout = r8Layout(16, 16);
    const uint32_t session = fixture.openCopySession(16, 16);
    uint32_t buffer = 0;
    struct stat status;
    {
        // The application closes its fd: the library's duplicate is what is registered
        // again.
        const framecl::UniqueFd fd = framecl::test::frameBuffer(layout);
        REQUIRE(fstat(fd.get(), &status) == 0);
        REQUIRE(framecl_register_buffer(fixture.client, fd.get(), &layout, &buffer) == 0);
    }
    REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 1) == 0);

    fixture.daemon.stop();
    framecl_done done;
    REQUIRE(framecl_next_done(fixture.client, client_timeout_ms, &done) == 0);
    CHECK(done.status == FRAMECL_FRAME_LOST);

    fixture.daemon.start();
    REQUIRE_MESSAGE(framecl_submit(fixture.client, session, buffer, buffer, 2) == 0,
                    framecl_last_error(fixture.client));
    REQUIRE_MESSAGE(framecl_next_done(fixture.client, client_timeout_ms, &done) == 0,
                    framecl_last_error(fixture.client));
    CHECK(done.session == session);
    CHECK(done.sequence == 2);
    CHECK(done.status == FRAMECL_FRAME_OK);

    const auto log = fixture.daemon.log();
    CHECK(log.hello_names.size() == 1);
    REQUIRE(log.registrations.size() == 1);
    CHECK(log.registrations[0].id == buffer);
    CHECK(log.registrations[0].inode == status.st_ino);
    REQUIRE(log.opened_sessions.size() == 1);
    REQUIRE(log.submits.size() == 1);
    CHECK(log.submits[0].session == log.opened_sessions[0]);
    CHECK(log.submits[0].session != session);
}

TEST_CASE("a session reopened after a daemon restart keeps its backpressure and deadline")
{
    ConnectedClient fixture;
    uint32_t session = 0;
    const framecl_session_options options{FRAMECL_BACKPRESSURE_DROP_OLDEST, 33000};
    REQUIRE(framecl_open_session_with(fixture.client, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0,
                                      &options, &session, nullptr) == 0);
    const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));

    fixture.daemon.stop();
    fixture.daemon.start();
    // The submit finds the daemon gone, reconnects and reopens the session first.
    REQUIRE_MESSAGE(framecl_submit(fixture.client, session, buffer, buffer, 1) == 0,
                    framecl_last_error(fixture.client));
    framecl_done done;
    REQUIRE_MESSAGE(framecl_next_done(fixture.client, client_timeout_ms, &done) == 0,
                    framecl_last_error(fixture.client));
    CHECK(done.status == FRAMECL_FRAME_OK);

    const auto log = fixture.daemon.log();
    REQUIRE(log.opened_options.size() == 1);
    CHECK(log.opened_options[0].backpressure == framecl::wire::Backpressure::DropOldest);
    CHECK(log.opened_options[0].deadline_us == 33000);
    REQUIRE(log.submits.size() == 1);
    CHECK(log.submits[0].session == log.opened_sessions.at(0));
}

TEST_CASE("frame parameters go with their submit, and the latest of each again with the first after a restart")
{
    using Parameter = framecl::test::FakeDaemonLog::Parameter;
    ConnectedClient fixture;
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));
    const double warm[3] = {2.0, 1.0, 1.5}, neutral[3] = {1.0, 1.0, 1.0}, table[2] = {0.0, 1.0};
    const framecl_frame_parameter first[2] = {{1, "gains", warm, 3}, {2, "lut", table, 2}};
    const framecl_frame_parameter second[1] = {{1, "gains", neutral, 3}};
    framecl_done done;
    for (const auto& [sequence, parameters, count] :
         {std::tuple{1u, first, size_t(2)}, std::tuple{2u, second, size_t(1)}, std::tuple{3u, second, size_t(0)}}) {
        REQUIRE(framecl_submit_with_parameters(fixture.client, session, buffer, buffer, sequence, -1, nullptr,
                                               parameters, count) == 0);
        REQUIRE(framecl_next_done(fixture.client, client_timeout_ms, &done) == 0);
    }
    auto log = fixture.daemon.log();
    REQUIRE(log.submits.size() == 3);
    CHECK(log.submits[0].parameters ==
          std::vector<Parameter>{{1, "gains", {2.0, 1.0, 1.5}}, {2, "lut", {0.0, 1.0}}});
    CHECK(log.submits[1].parameters == std::vector<Parameter>{{1, "gains", {1.0, 1.0, 1.0}}});
    CHECK(log.submits[2].parameters.empty());

    // A new daemon knows none of them: the first submit brings the latest of each.
    fixture.daemon.stop();
    fixture.daemon.start();
    for (uint64_t sequence : {4u, 5u}) {
        REQUIRE_MESSAGE(framecl_submit(fixture.client, session, buffer, buffer, sequence) == 0,
                        framecl_last_error(fixture.client));
        REQUIRE(framecl_next_done(fixture.client, client_timeout_ms, &done) == 0);
    }
    log = fixture.daemon.log();
    REQUIRE(log.submits.size() == 2);
    CHECK(log.submits[0].parameters ==
          std::vector<Parameter>{{1, "gains", {1.0, 1.0, 1.0}}, {2, "lut", {0.0, 1.0}}});
    CHECK(log.submits[1].parameters.empty());

    // More than a packet holds is refused before anything is sent.
    const std::vector<double> huge(9000, 0.5);
    const framecl_frame_parameter too_long{4, "lut", huge.data(), huge.size()};
    CHECK(framecl_submit_with_parameters(fixture.client, session, buffer, buffer, 6, -1, nullptr, &too_long, 1) ==
          -EMSGSIZE);
    CHECK(fixture.daemon.log().submits.size() == 2);
}

TEST_CASE("a daemon that stays away makes calls fail with ENOTCONN once the timeout has passed")
{
    ConnectedClient fixture;
    const std::string path = fixture.daemon.socketPath();
    const uint32_t session = fixture.openCopySession(16, 16);
    const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));

    fixture.daemon.stop();
    const auto start = Clock::now();
    CHECK(framecl_submit(fixture.client, session, buffer, buffer, 1) == -ENOTCONN);
    const auto waited = Clock::now() - start;
    CHECK(waited >= std::chrono::milliseconds(client_timeout_ms));
    CHECK(waited < std::chrono::milliseconds(client_timeout_ms) + restart_margin);
    CHECK(std::string(framecl_last_error(fixture.client))
              .find("framecld is not running at " + path) == 0);

    // Later calls try once, and fail at once while there is no socket.
    const auto later = Clock::now();
    char* json = nullptr;
    CHECK(framecl_stats(fixture.client, &json) == -ENOTCONN);
    CHECK(Clock::now() - later < restart_margin);

    // Releasing needs no daemon: none holds the buffer now.
    CHECK(framecl_release_buffer(fixture.client, buffer) == 0);
    CHECK(framecl_close_session(fixture.client, session) == 0);
}

TEST_CASE("after a restart, disconnecting leaves no fd open, kept duplicates included")
{
    auto openFds = [] {
        const std::filesystem::directory_iterator fds("/proc/self/fd");
        return std::distance(begin(fds), end(fds));
    };
    const auto before = openFds();
    {
        ConnectedClient fixture({.answer_submits = false});
        const uint32_t session = fixture.openCopySession(16, 16);
        const uint32_t buffer = fixture.registerBuffer(r8Layout(16, 16));
        REQUIRE(framecl_submit(fixture.client, session, buffer, buffer, 1) == 0);
        fixture.daemon.stop();
        framecl_done done;
        REQUIRE(framecl_next_done(fixture.client, client_timeout_ms, &done) == 0);
        fixture.daemon.start();
        REQUIRE_MESSAGE(framecl_submit(fixture.client, session, buffer, buffer, 2) == 0,
                        framecl_last_error(fixture.client));
    }
    CHECK(openFds() == before);
}
