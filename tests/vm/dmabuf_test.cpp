// Real dma-bufs through a real framecld: runs in a guest kernel that has vgem
// (tests/vm/README.md), never on the host. Buffers come from libframecl's allocator
// (FRAMECL_BUFFERS_DRM: vgem dumb buffers exported with PRIME), are filled and read
// through their mmap between framecl_begin_cpu_access and framecl_end_cpu_access, and
// every output is checked against the CPU reference.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>

#include "child_process.hpp"
#include "daemon_client.hpp"
#include "dmabuf_frame.hpp"
#include "guest_daemon.hpp"
#include "reference_color.hpp"
#include "temp_dir.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;
using framecl::UniqueFd;

namespace {

// NV12 with rows padded past the width and the chroma plane a page past the luma.
framecl_frame_layout paddedNv12(uint32_t width, uint32_t height)
{
    framecl_frame_layout layout{};
    layout.fourcc = DRM_FORMAT_NV12;
    layout.width = width;
    layout.height = height;
    layout.num_planes = 2;
    layout.planes[0] = {0, width + 64};
    layout.planes[1] = {(width + 64) * height + 4096, width + 64};
    return layout;
}

framecl_frame_layout paddedSingle(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t bytes_per_pixel)
{
    framecl_frame_layout layout{};
    layout.fourcc = fourcc;
    layout.width = width;
    layout.height = height;
    layout.num_planes = 1;
    layout.planes[0] = {0, width * bytes_per_pixel + 128};
    return layout;
}

uint32_t openSession(framecl_client* client, const char* pipeline, uint32_t fourcc, uint32_t width, uint32_t height)
{
    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session(client, pipeline, fourcc, width, height, nullptr, 0, &session, nullptr) == 0,
                    std::string(framecl_last_error(client)));
    return session;
}

framecl_done frame(framecl_client* client, uint32_t session, const DmaBufFrame& in, const DmaBufFrame& out,
                   uint64_t sequence)
{
    REQUIRE(framecl_submit(client, session, in.id, out.id, sequence) == 0);
    const framecl_done done = nextDone(client, 120000);
    REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    CHECK(done.sequence == sequence);
    return done;
}

} // namespace

TEST_CASE("libframecl's DRM allocator hands out real dma-bufs from vgem")
{
    const UniqueFd fd = vgemBuffer(100000);
    struct statfs fs {};
    REQUIRE(fstatfs(fd.get(), &fs) == 0);
    CHECK(fs.f_type == DMA_BUF_MAGIC);
    CHECK(std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd.get())).string().rfind("/dmabuf:", 0) == 0);
    CHECK(lseek(fd.get(), 0, SEEK_END) >= 100000);
}

TEST_CASE("NV12 in vgem dma-bufs, padded and with the chroma plane at an offset, through copy and nv12_to_abgr")
{
    const RunningDaemon& daemon = guestDaemon();
    Client client = connectTo(daemon, "nv12", guest_request_timeout_ms);
    constexpr uint32_t w = 320, h = 180; // vivid's size too: one set of kernels compiled on the emulated CPU
    const auto in_layout = paddedNv12(w, h);
    DmaBufFrame in(client, in_layout);
    DmaBufFrame copied(client, paddedNv12(w, h));
    DmaBufFrame rgb(client, paddedSingle(DRM_FORMAT_ABGR8888, w, h, 4));
    const uint32_t copy = openSession(client, "copy", DRM_FORMAT_NV12, w, h);
    const uint32_t convert = openSession(client, "rgb", DRM_FORMAT_NV12, w, h);

    std::mt19937 random(7);
    uint64_t frames = 0;
    for (uint64_t sequence = 0; sequence < 6; sequence += 2) {
        CAPTURE(sequence);
        const auto luma = noise(size_t(w) * h, random);
        const auto chroma = noise(size_t(w) * h / 2, random);
        in.writePlane(0, luma, w, h);
        in.writePlane(1, chroma, w, h / 2);

        frame(client, copy, in, copied, sequence);
        CHECK(copied.readPlane(0, w, h) == luma);
        CHECK(copied.readPlane(1, w, h / 2) == chroma);

        frame(client, convert, in, rgb, sequence + 1);
        CHECK(rgb.readPlane(0, w * 4, h) == nv12ToAbgr(luma, chroma, w, h, YuvMatrix::Bt601, YuvRange::Limited));
        frames += 2;
    }

    const auto stats = statsOf(client, "nv12");
    CHECK(stats["buffer_kinds"] == nlohmann::json{{"dma-buf", 3}});
    CHECK(stats["import_paths"] == nlohmann::json{{"host-ptr", 3}}); // PoCL offers no dma-buf import of its own
    // Each frame brackets its input's and its output's use: START and END on each.
    CHECK(stats["dma_buf_syncs"] == 4 * frames);
}

TEST_CASE("ABGR8888 in vgem dma-bufs with padded rows, through copy and luma")
{
    const RunningDaemon& daemon = guestDaemon();
    Client client = connectTo(daemon, "abgr", guest_request_timeout_ms);
    constexpr uint32_t w = 75, h = 41; // no multiple of any work-group size
    DmaBufFrame in(client, paddedSingle(DRM_FORMAT_ABGR8888, w, h, 4));
    DmaBufFrame copied(client, paddedSingle(DRM_FORMAT_ABGR8888, w, h, 4));
    DmaBufFrame luma(client, paddedSingle(DRM_FORMAT_R8, w, h, 1));
    const uint32_t copy = openSession(client, "copy", DRM_FORMAT_ABGR8888, w, h);
    const uint32_t to_luma = openSession(client, "luma", DRM_FORMAT_ABGR8888, w, h);

    std::mt19937 random(11);
    for (uint64_t sequence = 0; sequence < 6; sequence += 2) {
        CAPTURE(sequence);
        const auto pixels = noise(size_t(w) * h * 4, random);
        in.writePlane(0, pixels, w * 4, h);
        frame(client, copy, in, copied, sequence);
        CHECK(copied.readPlane(0, w * 4, h) == pixels);
        frame(client, to_luma, in, luma, sequence + 1);
        CHECK(luma.readPlane(0, w, h) == lumaPlane(pixels));
    }
    CHECK(statsOf(client, "abgr")["dma_buf_syncs"] == 4 * 6);
}

TEST_CASE("real dma-bufs that do not fit their layout, and the DRM node itself, are refused; the daemon keeps serving")
{
    const RunningDaemon& daemon = guestDaemon();
    Client client = connectTo(daemon, "refused", guest_request_timeout_ms);
    constexpr uint32_t w = 320, h = 180;
    const auto layout = paddedNv12(w, h);
    const auto registerError = [&](int fd, const framecl_frame_layout& wanted) {
        uint32_t id = 0;
        CHECK(framecl_register_buffer(client, fd, &wanted, &id) < 0);
        return std::string(framecl_last_error(client));
    };

    const UniqueFd small = vgemBuffer(64 * 1024);
    const std::string small_error = registerError(small.get(), layout);
    CHECK_MESSAGE(contains(small_error, "buffer is 65536 bytes, the NV12 320x180 layout (plane offsets 0, 73216) needs " +
                                            std::to_string(framecl_layout_end(&layout))),
                  small_error);

    framecl_frame_layout narrow = layout;
    narrow.planes[0].stride = 100;
    const UniqueFd enough = vgemBuffer(framecl_layout_end(&layout));
    const std::string narrow_error = registerError(enough.get(), narrow);
    CHECK_MESSAGE(contains(narrow_error, "a plane's stride is smaller than its row"), narrow_error); // libframecl's check

    const UniqueFd node(open("/dev/dri/card0", O_RDWR | O_CLOEXEC));
    REQUIRE(node.valid());
    const std::string node_error = registerError(node.get(), layout);
    CHECK_MESSAGE(contains(node_error, "is a character device (/dev/dri/card0), not a dma-buf or memfd"), node_error);

    // The same connection, and the daemon, still take a buffer that fits, and run frames.
    DmaBufFrame in(client, layout);
    DmaBufFrame out(client, layout);
    const uint32_t copy = openSession(client, "copy", DRM_FORMAT_NV12, w, h);
    std::mt19937 random(5);
    const auto luma = noise(size_t(w) * h, random);
    in.writePlane(0, luma, w, h);
    frame(client, copy, in, out, 0);
    CHECK(out.readPlane(0, w, h) == luma);
    CHECK(statsOf(client, "refused")["buffer_kinds"] == nlohmann::json{{"dma-buf", 2}});
}

TEST_CASE("the mock camera streams through vgem buffers it allocates itself, each output equal to its input")
{
    const RunningDaemon& daemon = guestDaemon();
    // Opening a session on the emulated CPU takes seconds (PoCL compiles for the size).
    const auto run = runToCompletion({requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(),
                                      "--buffers", "vgem", "--pipeline", "copy", "--format", "nv12", "--size", "320x180",
                                      "--fps", "0", "--frames", "30", "--verify", "--json", "--timeout",
                                      std::to_string(guest_request_timeout_ms)},
                                     daemon.dir().path(), guest_wait);
    INFO(run.err);
    REQUIRE(run.status.code == 0);
    const auto report = nlohmann::json::parse(run.out);
    CHECK(report["buffers"] == "vgem");
    CHECK(report["ok"] == 30);
    CHECK(report["mismatches"] == 0);
}
