// Frames in and out through a real framecld: the client library, sealed memfds
// passed with SCM_RIGHTS, bad input of every kind, clients and daemons that die.
#include <csignal>
#include <fstream>
#include <random>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <zmq.hpp>

#include "daemon_client.hpp"
#include "daemon_fixture.hpp"
#include "envelope.hpp"
#include "framecl/client.h"
#include "memory_fds.hpp"
#include "raw_client.hpp"
#include "reference_color.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;
using namespace std::chrono_literals;
namespace wire = framecl::wire;

namespace {

std::string registerError(framecl_client* client, int fd, const framecl_frame_layout& layout)
{
    uint32_t id = 0;
    const int r = framecl_register_buffer(client, fd, &layout, &id);
    CHECK(r < 0);
    return framecl_last_error(client);
}

} // namespace

TEST_CASE("200 luma frames come back complete, in order, equal to the CPU reference")
{
    RunningDaemon daemon(luma_pipeline);
    Client client = connectTo(daemon);
    const uint32_t w = 61, h = 37; // no multiple of any work-group size
    uint64_t in_size = 0, out_size = 0;
    const auto in_layout = packed(DRM_FORMAT_ABGR8888, w, h, &in_size);
    framecl_frame_layout out_layout{};
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "luma", DRM_FORMAT_ABGR8888, w, h, nullptr, 0, &session, &out_layout) == 0);
    CHECK(out_layout.fourcc == DRM_FORMAT_R8);
    out_size = framecl_layout_end(&out_layout);

    constexpr size_t pool = 4;
    framecl::UniqueFd in_fds[pool], out_fds[pool];
    uint32_t in_ids[pool], out_ids[pool];
    for (size_t s = 0; s < pool; ++s) {
        in_ids[s] = registerMemfd(client, in_layout, in_size, in_fds[s]);
        out_ids[s] = registerMemfd(client, out_layout, out_size, out_fds[s]);
    }

    std::mt19937 random(42);
    std::vector<std::vector<uint8_t>> sent(pool);
    uint64_t expected = 0;
    const auto collect = [&] {
        const framecl_done done = nextDone(client);
        REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
        CHECK(done.sequence == expected); // in order
        const size_t slot = expected % pool;
        CHECK(readMemfd(out_fds[slot].get(), out_size) == lumaPlane(sent[slot]));
        CHECK(done.stage_count == 1);
        ++expected;
    };
    for (uint64_t i = 0; i < 200; ++i) {
        if (i >= pool)
            collect();
        const size_t slot = i % pool;
        sent[slot].resize(in_size);
        for (auto& byte : sent[slot])
            byte = uint8_t(random());
        REQUIRE(pwrite(in_fds[slot].get(), sent[slot].data(), in_size, 0) == ssize_t(in_size));
        REQUIRE(framecl_submit(client, session, in_ids[slot], out_ids[slot], i) == 0);
    }
    while (expected < 200)
        collect();
}

TEST_CASE("200 frames from the mock camera come back complete, in order and unchanged through copy")
{
    RunningDaemon daemon;
    auto run = runToCompletion({requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(), "--pipeline",
                                "copy", "--format", "nv12", "--size", "320x240", "--fps", "0", "--frames", "200",
                                "--verify", "--json"},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.out << run.err);
    const auto summary = nlohmann::json::parse(run.out);
    CHECK(summary["frames"] == 200);
    CHECK(summary["ok"] == 200);
    CHECK(summary["failed"] == 0);
    CHECK(summary["lost"] == 0);
    CHECK(summary["out_of_order"] == 0);
    CHECK(summary["mismatches"] == 0);
}

TEST_CASE("a client killed mid-stream is released and the other client keeps every frame")
{
    RunningDaemon daemon;
    const auto camera = [&](const char* name, const char* frames, const char* fps) {
        return std::make_unique<ChildProcess>(
            std::vector<std::string>{requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(),
                                     "--name", name, "--pipeline", "copy", "--format", "abgr8888", "--size",
                                     "160x120", "--fps", fps, "--frames", frames, "--verify", "--json"},
            std::map<std::string, std::string>{}, daemon.dir().path());
    };
    auto survivor = camera("survivor", "120", "40");
    auto victim = camera("victim", "1000000", "0");

    Client observer = connectTo(daemon, "observer");
    const auto victimDone = [&] {
        const auto now = stats(observer);
        for (const auto& client : now["clients"])
            if (client["name"] == "victim" && !client["sessions"].empty())
                return client["sessions"][0]["frames_done"].get<uint64_t>();
        return uint64_t(0);
    };
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (victimDone() < 20 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    const std::string seen = stats(observer).dump(); // outside the message: see waitForFrames (scheduling_test)
    REQUIRE_MESSAGE(victimDone() >= 20, seen << victim->stderrText());
    victim->signal(SIGKILL);
    REQUIRE(victim->wait(10s));

    const auto status = survivor->wait(60s);
    REQUIRE(status);
    CHECK_MESSAGE(status->code == 0, survivor->stdoutText() << survivor->stderrText());
    const auto summary = nlohmann::json::parse(survivor->stdoutText());
    CHECK(summary["ok"] == 120);
    CHECK(summary["lost"] == 0);
    CHECK(summary["mismatches"] == 0);

    const auto after = stats(observer);
    CHECK(after["released_on_disconnect"]["clients"] == 1);
    CHECK(after["released_on_disconnect"]["sessions"] == 1);
    CHECK(after["released_on_disconnect"]["buffers"] == 9); // the camera's pool of 4 outputs, and 5 inputs
    for (const auto& client : after["clients"])
        CHECK(client["name"] != "victim");
}

TEST_CASE("malformed and out-of-place messages get an error reply and the daemon keeps serving")
{
    RunningDaemon daemon;
    RawClient raw(daemon);
    const auto roundTrip = [&](std::span<const uint8_t> bytes) { return raw.roundTrip(bytes); };

    std::mt19937 random(3);
    std::vector<uint8_t> noise(300);
    for (auto& byte : noise)
        byte = uint8_t(random());
    auto [type, text] = roundTrip(noise);
    CHECK(type == wire::Message::ErrorReply);
    CHECK(contains(text, "malformed message"));

    // A type without its table verifies, and was read as a CloseSession at address 0
    // (the server-message fuzzer's find, tests/fuzz/corpus/server_message/crash-e05310ad...).
    flatbuffers::FlatBufferBuilder empty_builder;
    empty_builder.Finish(wire::CreateEnvelope(empty_builder, wire::Message::CloseSession, 0));
    std::tie(type, text) = roundTrip({empty_builder.GetBufferPointer(), empty_builder.GetSize()});
    CHECK(type == wire::Message::ErrorReply);
    CHECK(contains(text, "malformed message: a CloseSession without its fields"));

    flatbuffers::FlatBufferBuilder builder;
    auto hello = framecl::protocol::finishEnvelope(builder, wire::CreateHelloDirect(builder, framecl::protocol::protocol_version, "raw"));
    const std::vector<uint8_t> truncated(hello.begin(), hello.begin() + long(hello.size() / 2));
    std::tie(type, text) = roundTrip(truncated);
    CHECK(type == wire::Message::ErrorReply);

    flatbuffers::FlatBufferBuilder submit_builder;
    auto submit = framecl::protocol::finishEnvelope(submit_builder, wire::CreateSubmit(submit_builder, 1, 7, 8, 99));
    std::tie(type, text) = roundTrip(submit);
    CHECK(type == wire::Message::ErrorReply);
    CHECK(contains(text, "say Hello first"));

    flatbuffers::FlatBufferBuilder old_builder;
    auto old_hello = framecl::protocol::finishEnvelope(old_builder, wire::CreateHelloDirect(old_builder, 7, "old"));
    std::tie(type, text) = roundTrip(old_hello);
    CHECK(type == wire::Message::ErrorReply);
    CHECK(contains(text, "protocol version 7 is not supported; this framecld speaks version " +
                             std::to_string(framecl::protocol::protocol_version)));

    std::tie(type, text) = roundTrip(hello);
    REQUIRE(type == wire::Message::Welcome);
    const std::string token = RawClient::envelopeOf(text)->message_as_Welcome()->token()->str();
    std::tie(type, text) = roundTrip(submit);
    CHECK(type == wire::Message::ErrorReply);
    CHECK(contains(text, "then bind the buffer socket with the Welcome's token"));
    raw.bind(token);
    std::tie(type, text) = roundTrip(submit);
    CHECK(type == wire::Message::ErrorReply);
    CHECK(contains(text, "Submit goes on the buffer socket"));
    std::tie(type, text) = raw.frameRoundTrip(submit);
    REQUIRE(type == wire::Message::Done);
    const wire::Done* done = RawClient::envelopeOf(text)->message_as_Done();
    CHECK(done->sequence() == 99);
    CHECK(done->status() == wire::FrameStatus::Failed);
    CHECK(contains(done->error()->str(), "no session 1"));

    // With a session, a Submit naming buffers never registered fails the same way.
    flatbuffers::FlatBufferBuilder open_builder;
    auto input = wire::CreateFrameLayout(open_builder, DRM_FORMAT_R8, 8, 8);
    auto open = framecl::protocol::finishEnvelope(
        open_builder, wire::CreateOpenSession(open_builder, 1, open_builder.CreateString("copy"), input));
    std::tie(type, text) = roundTrip(open);
    REQUIRE(type == wire::Message::SessionOpened);
    std::tie(type, text) = raw.frameRoundTrip(submit);
    REQUIRE(type == wire::Message::Done);
    done = RawClient::envelopeOf(text)->message_as_Done();
    CHECK(done->status() == wire::FrameStatus::Failed);
    CHECK(contains(done->error()->str(), "no buffer 7"));

    // A well-behaved client is served as if nothing happened.
    Client client = connectTo(daemon);
    uint32_t session = 0;
    CHECK(framecl_open_session(client, "copy", DRM_FORMAT_R8, 8, 8, nullptr, 0, &session, nullptr) == 0);
}

TEST_CASE("a Submit naming unknown buffers is refused and one with a mismatched layout gets a failed Done")
{
    RunningDaemon daemon;
    Client client = connectTo(daemon);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0, &session, nullptr) == 0);
    // The library knows its buffers and refuses an unknown id before the daemon sees it
    // (the daemon's own refusal is checked with raw messages above).
    CHECK(framecl_submit(client, session, 40, 41, 5) == -EINVAL);

    uint64_t in_size = 0, out_size = 0;
    const auto in_layout = packed(DRM_FORMAT_R8, 16, 16, &in_size);
    const auto out_layout = packed(DRM_FORMAT_R8, 16, 8, &out_size);
    framecl::UniqueFd in, out;
    const uint32_t in_id = registerMemfd(client, in_layout, in_size, in);
    const uint32_t out_id = registerMemfd(client, out_layout, out_size, out);
    REQUIRE(framecl_submit(client, session, in_id, out_id, 6) == 0);
    const framecl_done done = nextDone(client);
    CHECK(done.status == FRAMECL_FRAME_FAILED);
    CHECK(contains(done.error, "output buffer holds R8 16x8, the session writes R8 16x16"));
}

TEST_CASE("an acquire fence that is no sync_file fails its frame alone, a closed fd is refused at once, and a "
          "release fence the device cannot make fails its frame")
{
    RunningDaemon daemon;
    Client client = connectTo(daemon);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0, &session, nullptr) == 0);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_R8, 16, 16, &size);
    framecl::UniqueFd in, out;
    const uint32_t in_id = registerMemfd(client, layout, size, in);
    const uint32_t out_id = registerMemfd(client, layout, size, out);

    int pipe_fds[2];
    REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
    const framecl::UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    REQUIRE(framecl_submit_fenced(client, session, in_id, out_id, 1, read_end.get(), nullptr) == 0);
    const framecl_done refused = nextDone(client);
    CHECK(refused.status == FRAMECL_FRAME_FAILED);
    CHECK_MESSAGE(contains(refused.error, "the Submit's acquire fence is not a sync_file"), refused.error);

    CHECK(framecl_submit_fenced(client, session, in_id, out_id, 2, 1000, nullptr) == -EBADF);
    CHECK(contains(framecl_last_error(client), "not an open file descriptor"));

    // -1: no fence, as framecl_submit().
    REQUIRE(framecl_submit_fenced(client, session, in_id, out_id, 3, -1, nullptr) == 0);
    const framecl_done done = nextDone(client);
    CHECK(done.sequence == 3);
    CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    CHECK(stats(client)["clients"][0]["fence_waits"] == 0);

    // PoCL cannot export a semaphore as a sync_file: a release fence asked for fails
    // the frame, with the reason, and no fence comes.
    CHECK(framecl_offers_release_fences(client) == 0);
    int release = 7;
    REQUIRE(framecl_submit_fenced(client, session, in_id, out_id, 4, -1, &release) == 0);
    CHECK(release == -1);
    const framecl_done unfenced = nextDone(client);
    CHECK(unfenced.status == FRAMECL_FRAME_FAILED);
    CHECK_MESSAGE(contains(unfenced.error, "no release fence: the device offers no cl_khr_external_semaphore_sync_fd"),
                  unfenced.error);
}

// docs/protocol.md, "Fences": "Buffer order". Replayed without a recording, a frame's
// tiles alternate between two lanes, and the second frame could run beside the first.
TEST_CASE("a client chains two frames through a buffer without waiting for the first Done, and gets both right")
{
    RunningDaemon daemon("[gpu]\nrecording = \"off\"\nlanes = 2\ntuning = \"off\"\n");
    Client client = connectTo(daemon, "chain");
    // Large enough that the first frame is still running when the second comes.
    constexpr uint32_t w = 1920, h = 1080;
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_ABGR8888, w, h, &size);
    uint32_t first = 0, second = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_ABGR8888, w, h, nullptr, 0, &first, nullptr) == 0);
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_ABGR8888, w, h, nullptr, 0, &second, nullptr) == 0);
    framecl::UniqueFd a, b, c;
    const uint32_t a_id = registerMemfd(client, layout, size, a);
    const uint32_t b_id = registerMemfd(client, layout, size, b);
    const uint32_t c_id = registerMemfd(client, layout, size, c);

    std::mt19937 random(12);
    constexpr int chains = 8;
    for (int i = 0; i < chains; ++i) {
        CAPTURE(i);
        std::vector<uint8_t> pixels(size);
        for (auto& byte : pixels)
            byte = uint8_t(random());
        REQUIRE(pwrite(a.get(), pixels.data(), size, 0) == ssize_t(size));
        REQUIRE(framecl_submit(client, first, a_id, b_id, uint64_t(2 * i)) == 0);
        REQUIRE(framecl_submit(client, second, b_id, c_id, uint64_t(2 * i + 1)) == 0);
        for (int frame = 0; frame < 2; ++frame) {
            const framecl_done done = nextDone(client, 60000);
            REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
            CHECK(done.sequence == uint64_t(2 * i + frame));
        }
        CHECK(readMemfd(c.get(), size) == pixels);
    }
    // The second frames found the first still running (each at least once), and no frame
    // waited for a fence.
    const auto entry = stats(client)["clients"][0];
    CHECK(entry["buffer_waits"].get<int>() >= 1);
    CHECK(entry["buffer_waits"].get<int>() <= chains);
    CHECK(entry["fence_waits"] == 0);
}

TEST_CASE("a client cannot reach another client's sessions or buffers")
{
    RunningDaemon daemon;
    Client owner = connectTo(daemon, "owner");
    uint32_t session = 0;
    REQUIRE(framecl_open_session(owner, "copy", DRM_FORMAT_R8, 16, 16, nullptr, 0, &session, nullptr) == 0);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_R8, 16, 16, &size);
    framecl::UniqueFd in_fd, out_fd;
    const uint32_t in = registerMemfd(owner, layout, size, in_fd);
    const uint32_t out = registerMemfd(owner, layout, size, out_fd);

    // Another client names the owner's session and buffer ids, as raw messages (the
    // library refuses ids it did not register before the daemon sees them).
    RawClient intruder(daemon);
    intruder.bind(intruder.hello("intruder"));
    flatbuffers::FlatBufferBuilder submit;
    const auto submitted =
        intruder.frameRoundTrip(framecl::protocol::finishEnvelope(submit, wire::CreateSubmit(submit, session, in, out, 1)));
    REQUIRE(submitted.first == wire::Message::Done);
    const wire::Done* done = RawClient::envelopeOf(submitted.second)->message_as_Done();
    CHECK(done->status() == wire::FrameStatus::Failed);
    CHECK(done->error()->str() == fmt::format("no session {}", session));

    flatbuffers::FlatBufferBuilder close;
    const auto closed =
        intruder.roundTrip(framecl::protocol::finishEnvelope(close, wire::CreateCloseSession(close, 7, session)));
    REQUIRE(closed.first == wire::Message::ErrorReply);
    CHECK(RawClient::envelopeOf(closed.second)->message_as_ErrorReply()->message()->str() ==
          fmt::format("no session {}", session));

    flatbuffers::FlatBufferBuilder release;
    const std::vector<uint32_t> ids{in, out};
    const auto released =
        intruder.roundTrip(framecl::protocol::finishEnvelope(release, wire::CreateReleaseBuffersDirect(release, 8, &ids)));
    REQUIRE(released.first == wire::Message::ErrorReply);
    CHECK(RawClient::envelopeOf(released.second)->message_as_ErrorReply()->message()->str() ==
          fmt::format("no buffer {}, {}", in, out));

    // The owner's session and buffers are untouched: a frame through them comes back.
    REQUIRE(framecl_submit(owner, session, in, out, 2) == 0);
    const framecl_done owned = nextDone(owner);
    CHECK_MESSAGE(owned.status == FRAMECL_FRAME_OK, owned.error);
}

TEST_CASE("each refused import gets its own error and the daemon keeps serving")
{
    RunningDaemon daemon("[limits]\nmax_frame_pixels = 100000\nmax_buffers_per_client = 3\n"
                         "max_bytes_per_client = 1048576\nmax_sessions_per_client = 1\n");
    Client client = connectTo(daemon);
    uint64_t size = 0;
    const auto r8 = packed(DRM_FORMAT_R8, 64, 64, &size);

    int pipe_fds[2];
    REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
    CHECK(contains(registerError(client, pipe_fds[0], r8), "pipe"));
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    int socket_fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, socket_fds) == 0);
    CHECK(contains(registerError(client, socket_fds[0], r8), "socket"));
    close(socket_fds[0]);
    close(socket_fds[1]);
    framecl::UniqueFd null_device(open("/dev/null", O_RDWR | O_CLOEXEC));
    CHECK(contains(registerError(client, null_device.get(), r8), "not a dma-buf or memfd"));

    auto unsealed = namedMemfd("unsealed", off_t(size), 0);
    CHECK(contains(registerError(client, unsealed.get(), r8), "F_SEAL_SHRINK"));
    auto small = sealedMemfd("ipc-test", off_t(size - 1));
    CHECK(contains(registerError(client, small.get(), r8), std::to_string(size)));
    framecl_frame_layout narrow = r8;
    narrow.planes[0].stride = 63;
    auto fits = sealedMemfd("ipc-test", off_t(size));
    CHECK(contains(registerError(client, fits.get(), narrow), "stride"));
    uint64_t big_size = 0;
    const auto big = packed(DRM_FORMAT_R8, 400, 300, &big_size);
    auto big_fd = sealedMemfd("ipc-test", off_t(big_size));
    CHECK(contains(registerError(client, big_fd.get(), big), "max_frame_pixels"));

    // Limits per client: three buffers, then the fourth is refused.
    framecl::UniqueFd kept[3];
    for (auto& fd : kept)
        registerMemfd(client, r8, size, fd);
    auto fourth = sealedMemfd("ipc-test", off_t(size));
    CHECK(contains(registerError(client, fourth.get(), r8), "max_buffers_per_client"));
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_R8, 64, 64, nullptr, 0, &session, nullptr) == 0);
    CHECK(framecl_open_session(client, "copy", DRM_FORMAT_R8, 64, 64, nullptr, 0, &session, nullptr) < 0);
    CHECK(contains(framecl_last_error(client), "max_sessions_per_client"));

    // Another client is served normally; its third 360000-byte buffer would pass
    // max_bytes_per_client = 1048576 (1 MiB).
    Client other = connectTo(daemon, "other");
    uint64_t large_size = 0;
    const auto large = packed(DRM_FORMAT_ABGR8888, 300, 300, &large_size);
    framecl::UniqueFd large_fds[2];
    for (auto& fd : large_fds)
        registerMemfd(other, large, large_size, fd);
    auto third = sealedMemfd("ipc-test", off_t(large_size));
    CHECK(contains(registerError(other, third.get(), large), "max_bytes_per_client"));
}

TEST_CASE("frames over the in-flight limit come back busy, each with its Done naming the limit")
{
    RunningDaemon daemon("[limits]\nmax_inflight_per_client = 1\n");
    Client client = connectTo(daemon);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_ABGR8888, 640, 480, &size);
    framecl::UniqueFd in, out;
    const uint32_t in_id = registerMemfd(client, layout, size, in);
    const uint32_t out_id = registerMemfd(client, layout, size, out);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_ABGR8888, 640, 480, nullptr, 0, &session, nullptr) == 0);
    for (uint64_t i = 0; i < 8; ++i)
        REQUIRE(framecl_submit(client, session, in_id, out_id, i) == 0);
    int ok = 0, busy = 0;
    for (int i = 0; i < 8; ++i) {
        const framecl_done done = nextDone(client);
        ok += done.status == FRAMECL_FRAME_OK;
        busy += done.status == FRAMECL_FRAME_BUSY;
        if (done.status == FRAMECL_FRAME_BUSY)
            CHECK_MESSAGE(contains(done.error, "limits.max_inflight_per_client"), done.error);
    }
    CHECK(ok >= 1);
    CHECK(ok + busy == 8);
}

TEST_CASE("a client streaming through a daemon restart gets its lost frames reported and carries on")
{
    RunningDaemon daemon;
    Client client = connectTo(daemon, "restart-test", 10000);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_R8, 128, 64, &size);
    framecl::UniqueFd in, out;
    const uint32_t in_id = registerMemfd(client, layout, size, in);
    const uint32_t out_id = registerMemfd(client, layout, size, out);
    std::vector<uint8_t> frame(size);
    for (size_t i = 0; i < size; ++i)
        frame[i] = uint8_t(i * 7);
    REQUIRE(pwrite(in.get(), frame.data(), size, 0) == ssize_t(size));
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_R8, 128, 64, nullptr, 0, &session, nullptr) == 0);

    REQUIRE(framecl_submit(client, session, in_id, out_id, 1) == 0);
    CHECK(nextDone(client).status == FRAMECL_FRAME_OK);

    daemon.stop(SIGKILL);
    // A frame submitted into the dead daemon comes back lost, not never.
    const int submitted = framecl_submit(client, session, in_id, out_id, 2);
    if (submitted == 0) {
        const framecl_done lost = nextDone(client);
        CHECK(lost.sequence == 2);
        CHECK(lost.status == FRAMECL_FRAME_LOST);
    }
    daemon.start();

    // The library reconnects, registers the buffers again and reopens the session
    // under the same ids; frames flow again.
    bool flowing = false;
    for (uint64_t sequence = 3; sequence < 40 && !flowing; ++sequence) {
        if (framecl_submit(client, session, in_id, out_id, sequence) != 0) {
            std::this_thread::sleep_for(100ms);
            continue;
        }
        const framecl_done done = nextDone(client);
        CHECK(done.sequence == sequence);
        flowing = done.status == FRAMECL_FRAME_OK;
        if (!flowing)
            CHECK(done.status == FRAMECL_FRAME_LOST);
    }
    CHECK(flowing);
    CHECK(readMemfd(out.get(), size) == frame);
}

TEST_CASE("the sockets are 0660 and a user outside the allowed lists is refused")
{
    if (geteuid() != 0) {
        MESSAGE("not root: the refusal half needs to switch users; checking the modes only");
    }
    RunningDaemon daemon("", "socket_group = \"nogroup\"\nallowed_users = [\"root\"]\n");
    struct stat st {};
    REQUIRE(stat(daemon.socket().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0660);
    REQUIRE(stat((daemon.dir() / "buffers.sock").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0660);
    if (geteuid() != 0)
        return;

    // nobody:nogroup may open the sockets (their group) but is not an allowed user: the
    // buffer socket refuses it on its SO_PEERCRED credentials.
    REQUIRE(chmod(daemon.dir().path().c_str(), 0755) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const gid_t nogroup = 65534;
        const uid_t nobody = 65534;
        if (setgroups(0, nullptr) != 0 || setgid(nogroup) != 0 || setuid(nobody) != 0)
            _exit(3);
        const std::string socket = daemon.socket().string();
        framecl_connect_options options{socket.c_str(), "intruder", 5000};
        framecl_client* client = nullptr;
        if (framecl_connect(&options, &client) == 0)
            _exit(1);
        _exit(contains(framecl_last_error(nullptr), "not in daemon.allowed_users") ? 0 : 2);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a session's first frame costs about what its later frames do: the sequence is recorded and run at open")
{
    // denoise-edges, as config/pipelines.d has it, on a daemon as a board first runs it:
    // PoCL's cache empty, no tuning (which would run the kernels at open). Its first
    // frame once took 689 ms: PoCL compiles each kernel for its work-group size at the
    // first run.
    std::ifstream file(requireSourceRoot() / "config/pipelines.d/denoise-edges.toml");
    const std::string pipeline(std::istreambuf_iterator<char>(file), {});
    TempDir scratch;
    const auto plugins = scratch / "plugins";
    std::filesystem::create_directories(plugins);
    for (const char* plugin : {"framecl-color.so", "framecl-epsilon.so", "framecl-sobel.so"})
        std::filesystem::create_symlink(std::filesystem::path(requireEnv("FRAMECL_PLUGIN_DIR")) / plugin,
                                        plugins / plugin);
    RunningDaemon daemon("[gpu]\ntuning = \"off\"\n" + pipeline,
                         "plugin_dirs = [\"" + plugins.string() + "\"]\n",
                         {{"POCL_CACHE_DIR", (scratch / "pocl-cache").string()}}, std::chrono::seconds(300));
    Client client = connectTo(daemon, "first-frame", 60000);
    // Three sessions, so that one first frame caught by a busy machine does not decide.
    // What a first frame may cost over the later ones: without the run at open, PoCL's
    // compiles took the first frames here to 671, 247 and 176 ms at these sizes, the
    // later ones 1-2 ms; CPU hogs beside the test delay a first frame by a millisecond or
    // two (in a local run of .ci/run, 1.9 ms against a median of 0.9 once).
    constexpr double allowed_ms = 25;
    std::vector<double> excess_ms;
    for (const auto& [w, h] : {std::pair{320u, 240u}, std::pair{480u, 272u}, std::pair{640u, 360u}}) {
        uint32_t session = 0;
        framecl_frame_layout out_layout{};
        REQUIRE_MESSAGE(framecl_open_session(client, "denoise-edges", DRM_FORMAT_NV12, w, h, nullptr, 0, &session,
                                             &out_layout) == 0,
                        std::string(framecl_last_error(client)));
        uint64_t in_size = 0;
        const auto in_layout = packed(DRM_FORMAT_NV12, w, h, &in_size);
        framecl::UniqueFd in_fd, out_fd;
        const uint32_t in = registerMemfd(client, in_layout, in_size, in_fd);
        const uint32_t out = registerMemfd(client, out_layout, framecl_layout_end(&out_layout), out_fd);
        // The daemon's own span, Submit received to Done sent: the client's side is not
        // what is measured.
        std::vector<double> steady_ms;
        double first_ms = 0;
        for (uint64_t i = 0; i < 16; ++i) {
            REQUIRE(framecl_submit(client, session, in, out, i) == 0);
            const framecl_done done = nextDone(client, 60000);
            REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
            const double ms = double(done.end_ns - done.queued_ns) / 1e6;
            (i == 0 ? first_ms : steady_ms.emplace_back()) = ms;
        }
        std::sort(steady_ms.begin(), steady_ms.end());
        const double median_ms = steady_ms[steady_ms.size() / 2];
        MESSAGE(w << "x" << h << ": first frame " << first_ms << " ms, then a median of " << median_ms << " ms");
        excess_ms.push_back(first_ms - median_ms);
        REQUIRE(framecl_close_session(client, session) == 0);
    }
    std::sort(excess_ms.begin(), excess_ms.end());
    CHECK(excess_ms[1] < allowed_ms);
}
