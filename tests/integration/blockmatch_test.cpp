// blockmatch, the stateful filter, through a real daemon: the mock camera's sliding
// texture goes through `color nv12_to_y -> blockmatch` and the vectors are the texture's
// motion, frame after frame; a frame that fails leaves the next with no previous frame.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <stb/stb_image.h>

#include "child_process.hpp"
#include "daemon_client.hpp"
#include "daemon_fixture.hpp"
#include "test_env.hpp"

using namespace framecl::test;

namespace {

const std::string pipelines = R"(
[[pipeline]]
name = "motion"
stages = [
  { plugin = "color", op = "nv12_to_y" },
  { plugin = "blockmatch", block = 8, range = 4 },
]
[[pipeline]]
name = "match"
stages = [ { plugin = "blockmatch", block = 4, range = 2 } ]
)";

// One block's result as docs/filters.md lays it out: (dx, dy, cost low, cost high).
struct Match {
    int dx, dy;
    uint32_t cost;
};

Match matchAt(const uint8_t* bytes, size_t block)
{
    const uint8_t* p = bytes + 4 * block;
    return {int8_t(p[0]), int8_t(p[1]), uint32_t(p[2] | p[3] << 8)};
}

} // namespace

TEST_CASE("blockmatch finds the mock camera's sliding texture through the daemon, frame after frame")
{
    RunningDaemon daemon(pipelines);
    constexpr int width = 96, height = 64, block = 8, dx = 3, dy = -2;
    constexpr int pool = 3, frames = 12;
    const auto dump = daemon.dir().path() / "dump";
    auto run = runToCompletion({requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(), "--pipeline",
                                "motion", "--format", "nv12", "--size", fmt::format("{}x{}", width, height), "--fps",
                                "0", "--frames", std::to_string(frames), "--pool", std::to_string(pool), "--motion",
                                fmt::format("{},{}", dx, dy), "--dump", dump.string()},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.out << run.err);

    const int blocks_x = (width + block - 1) / block, blocks_y = (height + block - 1) / block;
    for (int i = 0; i < frames; ++i) {
        CAPTURE(i);
        const auto file = dump / fmt::format("frame-{:06}.png", i);
        int w = 0, h = 0, channels = 0;
        std::unique_ptr<uint8_t, void (*)(void*)> pixels(stbi_load(file.c_str(), &w, &h, &channels, 4),
                                                          stbi_image_free);
        REQUIRE_MESSAGE(pixels, file.string());
        REQUIRE(w == blocks_x);
        REQUIRE(h == blocks_y);
        // The camera shows its pool + 1 inputs in turn: input 0 comes back after the
        // last, a jump past the range, and a session's first frame has nothing before it.
        const bool first = i == 0;
        if (!first && i % (pool + 1) == 0)
            continue;
        size_t checked = 0;
        for (int by = 0; by < blocks_y; ++by)
            for (int bx = 0; bx < blocks_x; ++bx) {
                const Match match = matchAt(pixels.get(), size_t(by * blocks_x + bx));
                CAPTURE(bx);
                CAPTURE(by);
                if (first) {
                    CHECK((match.dx == 0 && match.dy == 0 && match.cost == 65535));
                    continue;
                }
                // Blocks whose texture was inside the previous frame match it exactly.
                const int x0 = bx * block, y0 = by * block;
                const int x1 = std::min(x0 + block, width) - 1, y1 = std::min(y0 + block, height) - 1;
                if (x0 - dx < 0 || x1 - dx >= width || y0 - dy < 0 || y1 - dy >= height)
                    continue;
                CHECK(match.dx == dx);
                CHECK(match.dy == dy);
                CHECK(match.cost == 0);
                ++checked;
            }
        if (!first)
            CHECK(checked == size_t((blocks_x - 1) * (blocks_y - 1)));
    }
}

TEST_CASE("a frame that fails leaves blockmatch's next frame with no previous frame")
{
    RunningDaemon daemon(pipelines);
    Client client = connectTo(daemon);
    constexpr uint32_t width = 16, height = 12, blocks = 4 * 3;
    framecl_frame_layout out_layout{};
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "match", DRM_FORMAT_R8, width, height, nullptr, 0, &session, &out_layout) ==
            0);
    uint64_t in_size = 0;
    const auto in_layout = packed(DRM_FORMAT_R8, width, height, &in_size);
    const uint64_t out_size = framecl_layout_end(&out_layout);
    framecl::UniqueFd a_fd, b_fd, out_fd, small_fd;
    const uint32_t a = registerMemfd(client, in_layout, in_size, a_fd);
    const uint32_t b = registerMemfd(client, in_layout, in_size, b_fd);
    const uint32_t out = registerMemfd(client, out_layout, out_size, out_fd);
    uint64_t small_size = 0;
    const auto small_layout = packed(DRM_FORMAT_ABGR8888, 2, 2, &small_size);
    const uint32_t small = registerMemfd(client, small_layout, small_size, small_fd);
    std::mt19937 random(7);
    for (const int fd : {a_fd.get(), b_fd.get()}) {
        std::vector<uint8_t> bytes(in_size);
        for (auto& byte : bytes)
            byte = uint8_t(random());
        REQUIRE(pwrite(fd, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()));
    }

    uint64_t sequence = 0;
    // Runs `input` and returns how many blocks say "no previous frame".
    const auto firstFrameBlocks = [&](uint32_t input) {
        REQUIRE(framecl_submit(client, session, input, out, ++sequence) == 0);
        const framecl_done done = nextDone(client);
        REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
        const auto bytes = readMemfd(out_fd.get(), out_size);
        size_t count = 0;
        for (size_t k = 0; k < blocks; ++k) {
            const Match match = matchAt(bytes.data(), k);
            count += match.dx == 0 && match.dy == 0 && match.cost == 65535;
        }
        return count;
    };
    CHECK(firstFrameBlocks(a) == blocks); // the session's first frame
    CHECK(firstFrameBlocks(b) == 0);      // b against a: random bytes cost far less than 65535
    REQUIRE(framecl_submit(client, session, a, small, ++sequence) == 0);
    const framecl_done failed = nextDone(client);
    CHECK(failed.status == FRAMECL_FRAME_FAILED);
    CHECK(firstFrameBlocks(a) == blocks); // nothing before it: the failed frame reset the state
    CHECK(firstFrameBlocks(b) == 0);
}

TEST_CASE("a refused frame resets the state of the frame after it, not of an older one still waiting")
{
    // Frames long enough on PoCL that the second waits while the first runs.
    RunningDaemon daemon("[gpu]\ntuning = \"off\"\n[limits]\nmax_inflight_per_client = 2\n"
                         "[[pipeline]]\nname = \"slow\"\nstages = [ { plugin = \"blockmatch\", block = 8, range = 8 } ]\n");
    Client client = connectTo(daemon);
    constexpr uint32_t width = 1280, height = 720;
    constexpr size_t blocks = (width / 8) * (height / 8);
    framecl_frame_layout out_layout{};
    uint32_t session = 0;
    const framecl_session_options reject{FRAMECL_BACKPRESSURE_REJECT, 0};
    REQUIRE(framecl_open_session_with(client, "slow", DRM_FORMAT_R8, width, height, nullptr, 0, &reject, &session,
                                      &out_layout) == 0);
    uint64_t in_size = 0;
    const auto in_layout = packed(DRM_FORMAT_R8, width, height, &in_size);
    const uint64_t out_size = framecl_layout_end(&out_layout);
    framecl::UniqueFd a_fd, b_fd, out_fds[4];
    const uint32_t a = registerMemfd(client, in_layout, in_size, a_fd);
    const uint32_t b = registerMemfd(client, in_layout, in_size, b_fd);
    uint32_t outs[4];
    for (int i = 0; i < 4; ++i)
        outs[i] = registerMemfd(client, out_layout, out_size, out_fds[i]);
    std::mt19937 random(11);
    for (const int fd : {a_fd.get(), b_fd.get()}) {
        std::vector<uint8_t> bytes(in_size);
        for (auto& byte : bytes)
            byte = uint8_t(random());
        REQUIRE(pwrite(fd, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()));
    }
    // How many of an output's blocks say "no previous frame".
    const auto firstFrameBlocks = [&](int out) {
        const auto bytes = readMemfd(out_fds[out].get(), out_size);
        size_t count = 0;
        for (size_t k = 0; k < blocks; ++k) {
            const Match match = matchAt(bytes.data(), k);
            count += match.dx == 0 && match.dy == 0 && match.cost == 65535;
        }
        return count;
    };
    const auto waitFor = [&](uint64_t sequence) {
        const framecl_done done = nextDone(client);
        REQUIRE(done.sequence == sequence);
        return done;
    };

    // 1 runs, 2 waits behind it, 3 is refused (two in flight), 4 comes after 3, 5 after 4.
    REQUIRE(framecl_submit(client, session, a, outs[0], 1) == 0);
    REQUIRE(framecl_submit(client, session, b, outs[1], 2) == 0);
    REQUIRE(framecl_submit(client, session, a, outs[2], 3) == 0);
    CHECK(waitFor(3).status == FRAMECL_FRAME_BUSY);
    CHECK(waitFor(1).status == FRAMECL_FRAME_OK);
    CHECK(waitFor(2).status == FRAMECL_FRAME_OK);
    REQUIRE(framecl_submit(client, session, b, outs[2], 4) == 0);
    CHECK(waitFor(4).status == FRAMECL_FRAME_OK);
    REQUIRE(framecl_submit(client, session, a, outs[3], 5) == 0);
    CHECK(waitFor(5).status == FRAMECL_FRAME_OK);

    CHECK(firstFrameBlocks(0) == blocks); // the session's first frame
    CHECK(firstFrameBlocks(1) == 0);      // 2 against 1, which ran
    CHECK(firstFrameBlocks(2) == blocks); // 4, after the refused 3: nothing before it
    CHECK(firstFrameBlocks(3) == 0);      // 5 against 4
}
