// scheduler::FrameScheduler on PoCL, with the test as its owner: frames of `copy`
// between sealed memfds, each ending exactly once — ran with its output equal to its
// input, or dropped while waiting — and none ending for a client that went away.
#include <cstring>

#include <poll.h>

#include <doctest/doctest.h>

#include "base/monotonic_clock.hpp"
#include "filter_test_support.hpp"
#include "memory_fds.hpp"
#include "scheduler/frame_scheduler.hpp"

using namespace framecl;

namespace {

test::FilterDevice& device()
{
    static test::FilterDevice opened("");
    return opened;
}

constexpr uint32_t width = 64, height = 48;
constexpr size_t frame_bytes = width * height * 3 / 2;

framecl_frame_layout nv12()
{
    framecl_frame_layout layout{DRM_FORMAT_NV12, width, height, 2, {}};
    layout.planes[0] = {0, width};
    layout.planes[1] = {width * height, width};
    return layout;
}

// A client's buffer: a sealed memfd it keeps mapped, and the daemon's import of it.
struct ClientBuffer {
    UniqueFd fd;
    test::SharedMapping client;
    std::shared_ptr<memory::ImportedBuffer> imported;

    explicit ClientBuffer(uint8_t seed)
        : fd(test::sealedMemfd("frame-scheduler", off_t(frame_bytes))), client(fd.get(), frame_bytes)
    {
        for (size_t i = 0; i < frame_bytes; ++i)
            client.bytes()[i] = uint8_t(i * 7 + seed);
        auto buffer = memory::importBuffer(*device().gpu, test::duplicate(fd), nv12(), UINT64_MAX);
        REQUIRE_MESSAGE(buffer.has_value(), (buffer ? "" : buffer.error().message));
        imported = *buffer;
    }
    bool equals(const ClientBuffer& other) const
    {
        return std::memcmp(client.bytes(), other.client.bytes(), frame_bytes) == 0;
    }
};

struct Ended {
    uint64_t client_id;
    uint64_t sequence;
    scheduler::Outcome outcome;
    std::string error;
};

// The owner: records each end, and runs the loop's part until `count` frames ended.
struct Owner {
    std::vector<Ended> ended;
    scheduler::FrameScheduler scheduler{*device().gpu, config::GpuConfig{},
                                        {[this](const scheduler::FrameEnd& end) {
                                             ended.push_back({end.frame.client_id, end.frame.sequence, end.outcome,
                                                              end.error});
                                         },
                                         [](const std::string& reason) { FAIL("the GPU is lost: " << reason); }}};

    void runUntil(size_t count)
    {
        scheduler.schedule();
        while (ended.size() < count) {
            pollfd ready{scheduler.completionFd(), POLLIN, 0};
            REQUIRE(poll(&ready, 1, 30'000) == 1);
            scheduler.onCompletions();
            scheduler.schedule();
        }
    }
};

std::shared_ptr<pipeline::Session> copySession()
{
    auto session = device().tryOpen("copy", {DRM_FORMAT_NV12, width, height});
    REQUIRE_MESSAGE(session.has_value(), (session ? "" : session.error().message));
    return std::move(*session);
}

scheduler::Frame frameOf(uint64_t client, uint64_t sequence, const std::shared_ptr<pipeline::Session>& session,
                         const ClientBuffer& in, const ClientBuffer& out, uint64_t deadline_ns = 0)
{
    static uint64_t arrival = 0;
    return {client, 1, sequence, session, in.imported, out.imported, monotonicNs(), ++arrival, deadline_ns};
}

} // namespace

TEST_CASE("two clients' frames each run once, in each client's order, and come out right")
{
    Owner owner;
    owner.scheduler.placeClient(1, 0, 1);
    owner.scheduler.placeClient(2, 0, 1);
    const auto session_1 = copySession(), session_2 = copySession();
    std::vector<std::unique_ptr<ClientBuffer>> inputs, outputs;
    for (uint64_t sequence = 1; sequence <= 3; ++sequence)
        for (uint64_t client = 1; client <= 2; ++client) {
            inputs.push_back(std::make_unique<ClientBuffer>(uint8_t(sequence * 10 + client)));
            outputs.push_back(std::make_unique<ClientBuffer>(0));
            owner.scheduler.submit(frameOf(client, sequence, client == 1 ? session_1 : session_2, *inputs.back(),
                                           *outputs.back()));
        }
    CHECK(owner.scheduler.framesWaiting(1) == 3);
    CHECK(owner.scheduler.framesLeft() == 6);
    owner.runUntil(6);
    CHECK(owner.ended.size() == 6);
    CHECK(owner.scheduler.framesLeft() == 0);
    uint64_t last[3] = {0, 0, 0};
    for (const Ended& end : owner.ended) {
        CHECK_MESSAGE(end.outcome == scheduler::Outcome::Ran, end.error);
        CHECK(end.sequence == last[end.client_id] + 1);
        last[end.client_id] = end.sequence;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
        CHECK(outputs[i]->equals(*inputs[i]));
}

TEST_CASE("a frame past its deadline and the oldest one dropped end Dropped, and a removed client's end with it")
{
    Owner owner;
    owner.scheduler.placeClient(1, 0, 1);
    const auto session = copySession();
    const ClientBuffer in(3), out_a(0), out_b(0), out_c(0);
    owner.scheduler.submit(frameOf(1, 1, session, in, out_a, monotonicNs() - 1));
    owner.scheduler.schedule();
    REQUIRE(owner.ended.size() == 1);
    CHECK(owner.ended[0].outcome == scheduler::Outcome::Dropped);
    CHECK(owner.ended[0].error.find("deadline") != std::string::npos);

    owner.scheduler.submit(frameOf(1, 2, session, in, out_b));
    owner.scheduler.submit(frameOf(1, 3, session, in, out_c));
    CHECK(owner.scheduler.dropOldest(1, 1, "replaced"));
    REQUIRE(owner.ended.size() == 2);
    CHECK(owner.ended[1].sequence == 2);
    CHECK(owner.ended[1].outcome == scheduler::Outcome::Dropped);
    CHECK_FALSE(owner.scheduler.dropOldest(1, 2, "no such session"));

    owner.scheduler.removeClient(1);
    owner.scheduler.schedule();
    CHECK(owner.scheduler.framesLeft() == 0);
    CHECK(owner.ended.size() == 2);
}
