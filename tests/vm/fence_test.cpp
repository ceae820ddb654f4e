// Fences against a real framecld in the guest (tests/vm/README.md): a producer's write
// fence on a vgem input (implicit sync: the daemon exports the buffer's fences with
// DMA_BUF_IOCTL_EXPORT_SYNC_FILE), and the same kind of fence handed over with the
// Submit as a sync_file (explicit sync). The frame must not read its input before the
// fence signals — its output shows what the producer wrote just before signalling —
// while other clients' frames run; a fence that fails or never signals ends that frame
// alone, with a Done that says why. Release fences, from an emulated
// cl_khr_external_semaphore_sync_fd (semaphore_emulation.cpp), signal only once the
// frame's output is complete (docs/architecture.md, "Fences").
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <drm_fourcc.h>
#include <poll.h>

#include "daemon_client.hpp"
#include "dmabuf_frame.hpp"
#include "guest_daemon.hpp"
#include "memory/sync_file.hpp"
#include "test_env.hpp"
#include "vgem_fence.hpp"

using namespace framecl::test;
using framecl::UniqueFd;

namespace {

constexpr uint32_t w = 75, h = 41, row = w * 4; // as dmabuf_test.cpp's ABGR8888

framecl_frame_layout abgr()
{
    return packed(DRM_FORMAT_ABGR8888, w, h);
}

uint32_t openCopy(framecl_client* client, uint32_t deadline_us = 0)
{
    const framecl_session_options options{FRAMECL_BACKPRESSURE_BLOCK, deadline_us};
    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session_with(client, "copy", DRM_FORMAT_ABGR8888, w, h, nullptr, 0, &options,
                                              &session, nullptr) == 0,
                    std::string(framecl_last_error(client)));
    return session;
}

// The producer's last write before it signals, as a camera's DMA or a GPU would make
// it: straight into the mapping. A CPU-access bracket here would itself wait for the
// fence the producer holds (DMA_BUF_IOCTL_SYNC waits for the buffer's fences).
void producerWrites(DmaBufFrame& frame, const std::vector<uint8_t>& pixels)
{
    for (uint32_t r = 0; r < h; ++r)
        std::memcpy(frame.bytes + size_t(r) * frame.layout.planes[0].stride, &pixels[size_t(r) * row], row);
}

// poll(2) on a sync_file: 1 once it signalled, 0 while it has not within `timeout_ms`.
int pollFence(int fd, int timeout_ms)
{
    pollfd entry{fd, POLLIN, 0};
    const int ready = poll(&entry, 1, timeout_ms);
    REQUIRE(ready >= 0);
    return ready;
}

bool noDoneYet(framecl_client* client)
{
    framecl_done done{};
    return framecl_next_done(client, 0, &done) == -EAGAIN;
}

// `count` frames of another client through copy, each checked: they run while the
// fenced frame waits.
void streamBeside(framecl_client* client, uint32_t session, DmaBufFrame& in, const DmaBufFrame& out, int count,
                  std::mt19937& random)
{
    for (int sequence = 0; sequence < count; ++sequence) {
        const auto pixels = noise(size_t(row) * h, random);
        in.writePlane(0, pixels, row, h);
        REQUIRE(framecl_submit(client, session, in.id, out.id, uint64_t(sequence)) == 0);
        const framecl_done done = nextDone(client, 120000);
        REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
        CHECK(out.readPlane(0, row, h) == pixels);
    }
}

} // namespace

// The guest's framecld has cl_khr_external_semaphore_sync_fd emulated and a fence limit
// of 8 s (guest_daemon.cpp). The kernel's word on a fence that signalled with an error
// is mapped in tests/unit/memory/sync_file_test.cpp: nothing here makes one (no
// SW_SYNC, and vgem's fences expire without an error on this kernel).

TEST_CASE("fences: a frame starts once the write fence on its dma-buf input signals; other clients' frames flow "
          "meanwhile")
{
    const RunningDaemon& daemon = guestDaemon();
    Client camera = connectTo(daemon, "implicit", guest_request_timeout_ms);
    Client other = connectTo(daemon, "other", guest_request_timeout_ms);
    DmaBufFrame in(camera, abgr()), out(camera, abgr());
    const uint32_t session = openCopy(camera);
    DmaBufFrame other_in(other, abgr()), other_out(other, abgr());
    const uint32_t other_session = openCopy(other);
    std::mt19937 random(5);
    const auto early = noise(size_t(row) * h, random), late = noise(size_t(row) * h, random);
    in.writePlane(0, early, row, h);

    VgemWriteFence producer(in.fd.get());
    REQUIRE(framecl_submit(camera, session, in.id, out.id, 1) == 0);
    streamBeside(other, other_session, other_in, other_out, 3, random);
    CHECK(noDoneYet(camera));
    CHECK(statsOf(camera, "implicit")["frames_waiting"] == 1);

    producerWrites(in, late);
    producer.signal();
    const framecl_done done = nextDone(camera, 120000);
    REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    CHECK(out.readPlane(0, row, h) == late);
    const auto all = stats(camera);
    CHECK(all["daemon"]["implicit_sync"] == "on");
    CHECK(statsOf(camera, "implicit")["fence_waits"] == 1);
    CHECK(statsOf(camera, "other")["fence_waits"] == 0);
}

TEST_CASE("fences: a Submit's acquire fence holds its frame; one never signalled ends it at "
          "limits.max_fence_wait_ms (8000 here) or at the session's deadline")
{
    const RunningDaemon& daemon = guestDaemon();
    Client camera = connectTo(daemon, "acquire", guest_request_timeout_ms);
    DmaBufFrame in(camera, abgr()), out(camera, abgr());
    // The producer's own buffer carries the fence; the daemon sees it only as a sync_file.
    const UniqueFd producer_buffer = vgemBuffer(4096);
    const uint32_t session = openCopy(camera);
    std::mt19937 random(8);
    const auto early = noise(size_t(row) * h, random), late = noise(size_t(row) * h, random);
    in.writePlane(0, early, row, h);

    {
        INFO("signalled");
        VgemWriteFence producer(producer_buffer.get());
        {
            const UniqueFd acquire = writersFence(producer_buffer.get());
            REQUIRE(framecl_submit_fenced(camera, session, in.id, out.id, 1, acquire.get(), nullptr) ==
                    0);
        } // the daemon holds its own copy
        const auto waited_from = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - waited_from < std::chrono::milliseconds(500))
            REQUIRE(noDoneYet(camera));
        in.writePlane(0, late, row, h); // no fence on the input itself: bracketed as usual
        producer.signal();
        const framecl_done done = nextDone(camera, 120000);
        REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
        CHECK(out.readPlane(0, row, h) == late);
        CHECK(statsOf(camera, "acquire")["fence_waits"] == 1);
    }
    {
        INFO("never signalled: Failed at limits.max_fence_wait_ms");
        VgemWriteFence producer(producer_buffer.get());
        const UniqueFd acquire = writersFence(producer_buffer.get());
        REQUIRE(framecl_submit_fenced(camera, session, in.id, out.id, 2, acquire.get(), nullptr) == 0);
        const framecl_done failed = nextDone(camera, 60000);
        CHECK(failed.status == FRAMECL_FRAME_FAILED);
        CHECK_MESSAGE(contains(failed.error, "the Submit's acquire fence did not signal within "
                                             "limits.max_fence_wait_ms = 8000 ms"),
                      failed.error);
        producer.signal();
    }
    {
        INFO("never signalled: Dropped at the session's deadline");
        const uint32_t hurried = openCopy(camera, 300000);
        VgemWriteFence producer(producer_buffer.get());
        const UniqueFd acquire = writersFence(producer_buffer.get());
        REQUIRE(framecl_submit_fenced(camera, hurried, in.id, out.id, 3, acquire.get(), nullptr) == 0);
        const framecl_done dropped = nextDone(camera, 60000);
        CHECK(dropped.status == FRAMECL_FRAME_DROPPED);
        CHECK_MESSAGE(contains(dropped.error, "not started by its deadline: still waiting for the Submit's acquire fence"),
                      dropped.error);
        producer.signal();
    }
    // Nothing is left waiting.
    CHECK(statsOf(camera, "acquire")["frames_waiting"] == 0);
}

TEST_CASE("fences: release fences signal once the output is complete, never before, and two frames chained "
          "through them alone are both right")
{
    const RunningDaemon& daemon = guestDaemon();
    Client camera = connectTo(daemon, "release", guest_request_timeout_ms);
    REQUIRE(framecl_offers_release_fences(camera) == 1);
    DmaBufFrame a(camera, abgr()), b(camera, abgr()), c(camera, abgr());
    const uint32_t session = openCopy(camera);
    std::mt19937 random(9);
    const auto early = noise(size_t(row) * h, random), late = noise(size_t(row) * h, random);
    a.writePlane(0, early, row, h);

    // Frame 1 (a to b) cannot start before its producer signals, so neither fence may.
    VgemWriteFence producer(a.fd.get());
    int fd = -1;
    REQUIRE(framecl_submit_fenced(camera, session, a.id, b.id, 1, -1, &fd) == 0);
    REQUIRE(fd >= 0);
    const UniqueFd first(fd);
    // Frame 2 (b to c) is told of frame 1 by its release fence alone.
    REQUIRE(framecl_submit_fenced(camera, session, b.id, c.id, 2, first.get(), &fd) == 0);
    REQUIRE(fd >= 0);
    const UniqueFd second(fd);
    const auto waited_from = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - waited_from < std::chrono::milliseconds(500)) {
        REQUIRE(pollFence(first.get(), 0) == 0);
        REQUIRE(pollFence(second.get(), 0) == 0);
    }
    producerWrites(a, late);
    producer.signal();

    // The client waits for the last fence, not for a Done: then both outputs are there.
    REQUIRE(pollFence(second.get(), 120000) == 1);
    CHECK(pollFence(first.get(), 0) == 1);
    CHECK(c.readPlane(0, row, h) == late);
    CHECK(b.readPlane(0, row, h) == late);
    for (uint64_t sequence : {1, 2}) {
        const framecl_done done = nextDone(camera, 120000);
        CHECK(done.sequence == sequence);
        CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    }
    CHECK(stats(camera)["daemon"]["release_fences"] == "on");
}

// What the implicit path adds to a frame when nothing is pending, the common case: per
// dma-buf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, SYNC_IOC_FILE_INFO and a close. Timed in the
// same rounds as the DMA_BUF_IOCTL_SYNC START and END that a frame through host-ptr
// already costs each buffer, for scale. Printed for docs/benchmarks.md ("Fences"); the
// guest's CPU is emulated (TCG), so the times are not a board's, the ratio is.
TEST_CASE("the cost of looking for fences on a dma-buf with none pending, beside a CPU-access bracket")
{
    const UniqueFd buffer = vgemBuffer(1 << 20);
    constexpr int rounds = 2000;
    std::vector<double> fence_ns, bracket_ns;
    const auto since = [](std::chrono::steady_clock::time_point start) {
        return double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                          .count());
    };
    for (int i = 0; i < rounds; ++i) {
        auto start = std::chrono::steady_clock::now();
        auto fences = framecl::memory::exportDmaBufFences(buffer.get(), i % 2 == 1);
        REQUIRE(fences);
        REQUIRE(*fences);
        const auto state = framecl::memory::syncFileState((*fences)->get());
        (*fences)->reset();
        fence_ns.push_back(since(start));
        REQUIRE(state);
        REQUIRE(state->kind == framecl::memory::FenceState::Kind::Signalled);

        start = std::chrono::steady_clock::now();
        REQUIRE(framecl_begin_cpu_access(buffer.get(), FRAMECL_CPU_READ) == 0);
        REQUIRE(framecl_end_cpu_access(buffer.get(), FRAMECL_CPU_READ) == 0);
        bracket_ns.push_back(since(start));
    }
    std::sort(fence_ns.begin(), fence_ns.end());
    std::sort(bracket_ns.begin(), bracket_ns.end());
    const auto summary = [](const std::vector<double>& ns) {
        return "{\"median\": " + std::to_string(ns[ns.size() / 2]) + ", \"p99\": " +
               std::to_string(ns[ns.size() * 99 / 100]) + "}";
    };
    MESSAGE("fences_per_buffer_ns {\"fence_check\": " << summary(fence_ns) << ", \"cpu_access_bracket\": "
                                                     << summary(bracket_ns) << ", \"rounds\": " << rounds << "}");
}
