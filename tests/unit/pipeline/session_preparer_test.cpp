// The session preparer's GPU work goes to the GPU only in the turns its loop gives it
// (pipeline/gpu_turns.hpp): the test plays the loop, holding a piece back, running
// each, cancelling or destroying the preparer while one waits.
#include <poll.h>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "pipeline/session_preparer.hpp"
#include "reference_sobel.hpp"

using namespace framecl;
using test::LaidOutBuffer;

namespace {

const std::string preparer_pipelines = R"(
[[pipeline]]
name = "sobel-auto"
stages = [ { plugin = "sobel" } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice opened(preparer_pipelines);
    return opened;
}

constexpr uint32_t width = 48, height = 40;

// A request for a sobel-auto session of width x height, tuned (every variant and
// work-group size) and cut for a 2 ms kernel budget: many pieces of GPU work.
pipeline::SessionPreparer::Request sobelRequest(uint64_t ticket, const std::filesystem::path& cache)
{
    pipeline::SessionOptions options;
    options.kernel_budget_ns = 2'000'000;
    return {ticket,
            device().pipelines.catalog.find("sobel-auto"),
            {DRM_FORMAT_R8, width, height},
            options,
            std::make_shared<pipeline::Tuner>(*device().gpu, cache, std::chrono::minutes(5), options.kernel_budget_ns),
            {}};
}

// What the preparer hands the loop next: waits until its fd is readable.
pipeline::SessionPreparer::Taken takeNext(pipeline::SessionPreparer& preparer)
{
    pollfd ready{preparer.fd(), POLLIN, 0};
    REQUIRE(poll(&ready, 1, 60'000) == 1);
    return preparer.take();
}

// Whether the preparer hands the loop anything within `ms`.
bool handsAnything(pipeline::SessionPreparer& preparer, int ms)
{
    pollfd ready{preparer.fd(), POLLIN, 0};
    if (poll(&ready, 1, ms) == 0)
        return false;
    const auto taken = preparer.take();
    return !taken.progress.empty() || !taken.prepared.empty() || !taken.turns.empty();
}

} // namespace

TEST_CASE("an opening's GPU work waits for each turn the loop gives it, and the session it opens is right")
{
    test::TempDir cache;
    pipeline::SessionPreparer preparer(*device().gpu);
    preparer.prepare(sobelRequest(7, cache.path()));
    size_t turns = 0;
    std::unique_ptr<pipeline::Session> session;
    while (!session) {
        auto taken = takeNext(preparer);
        REQUIRE(taken.turns.size() <= 1); // one piece at a time, each waited for
        REQUIRE(taken.prepared.size() <= 1);
        for (auto& prepared : taken.prepared) {
            CHECK(prepared.ticket == 7);
            REQUIRE_MESSAGE(prepared.session, (prepared.session ? "" : prepared.session.error().message));
            session = std::move(*prepared.session);
        }
        for (auto& turn : taken.turns) {
            CHECK(turn->ticket() == 7);
            if (turns++ == 0) // held back: nothing more comes until it has run
                CHECK_FALSE(handsAnything(preparer, 300));
            auto event = turn->run();
            REQUIRE(event);
            REQUIRE_MESSAGE(*event, (*event ? "" : event->error().message));
        }
    }
    // Every candidate's frames, calibrations and first runs: many more pieces than
    // the session's own opening.
    const size_t candidates = pipeline::Tuner::candidates(device().pipelines.catalog.find("sobel-auto")->stages[0],
                                                          {DRM_FORMAT_R8, width, height},
                                                          device().gpu->capabilities().max_work_group_size)
                                  .size();
    CHECK(turns >= 2 * candidates);

    LaidOutBuffer in(*device().gpu, test::paddedLayout({DRM_FORMAT_R8, width, height}, 3), 5);
    LaidOutBuffer out(*device().gpu, test::paddedLayout({DRM_FORMAT_R8, width, height}, 3), 0);
    device().run(*session, in, out);
    const auto expected = reference::sobelPlane(in.rowStart(0, 0), int(width), int(height), int(in.layout.planes[0].stride),
                                           reference::SobelOutput::MagnitudeL1, reference::Border::Replicate, 0);
    const std::string differences = test::differingPixels(out.plane(0), expected, width, 1);
    CHECK_MESSAGE(differences.empty(), differences);
}

TEST_CASE("a cancelled opening gives up the turn it waits for: nothing of it runs, and nothing is reported")
{
    test::TempDir cache;
    pipeline::SessionPreparer preparer(*device().gpu);
    preparer.prepare(sobelRequest(3, cache.path()));
    std::shared_ptr<pipeline::PendingTurn> waiting;
    while (!waiting) {
        auto taken = takeNext(preparer);
        REQUIRE(taken.prepared.empty());
        if (!taken.turns.empty())
            waiting = taken.turns.front();
    }
    preparer.cancel({3});
    // The preparer gives the request up and wakes the loop, with no session and no more work.
    auto after = takeNext(preparer);
    CHECK(after.prepared.empty());
    CHECK(after.turns.empty());
    CHECK_FALSE(waiting->run()); // its turn came too late: nothing enqueued
}

TEST_CASE("a preparer destroyed while its work waits for a turn stops at once")
{
    test::TempDir cache;
    std::shared_ptr<pipeline::PendingTurn> waiting;
    {
        pipeline::SessionPreparer preparer(*device().gpu);
        preparer.prepare(sobelRequest(9, cache.path()));
        while (!waiting) {
            auto taken = takeNext(preparer);
            if (!taken.turns.empty())
                waiting = taken.turns.front();
        }
    } // joins its thread: it must not wait for the turn
    CHECK_FALSE(waiting->run());
}
