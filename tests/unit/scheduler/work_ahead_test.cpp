// The scheduler's prediction of the work on the GPU's lanes, against values worked out
// by hand from its documented rule (scheduler/work_ahead.hpp): each part starts when the
// one before it ends or when it was enqueued, the first no earlier than the last part
// seen to end; a part without a prediction counts as the lead.
#include <doctest/doctest.h>

#include "scheduler/work_ahead.hpp"

using framecl::scheduler::WorkAhead;

namespace {

constexpr uint64_t lead = 500;

// Lanes 0 and 1 of rank 0, lane 2 of rank 1 (a lower priority).
WorkAhead twoRanks()
{
    return WorkAhead({0, 0, 1}, lead);
}

WorkAhead::Part part(uint64_t frame, uint32_t lane, uint64_t predicted, uint64_t enqueued, bool last = true)
{
    return {frame, 7, 0, lane, predicted, enqueued, last};
}

} // namespace

TEST_CASE("the lead is half a millisecond, or a quarter of the kernel budget where that is less")
{
    CHECK(framecl::scheduler::feedLeadNs(0) == 500'000);
    CHECK(framecl::scheduler::feedLeadNs(8) == 500'000);
    CHECK(framecl::scheduler::feedLeadNs(1) == 250'000);
}

TEST_CASE("parts queued on a lane end one after another, from their enqueue or the part before")
{
    WorkAhead ahead = twoRanks();
    CHECK(ahead.aheadNs(1000, 0) == 0);
    CHECK_FALSE(ahead.busy(0));
    ahead.add(part(1, 0, 300, 1000)); // ends at 1300
    ahead.add(part(2, 0, 200, 1100)); // starts at 1300, ends at 1500
    CHECK(ahead.busy(0));
    CHECK(ahead.aheadNs(1000, 0) == 500);
    CHECK(ahead.aheadNs(1200, 0) == 300);
    // Not seen to end though predicted to have ended: taken to end now, and the part
    // behind it to run all its time after.
    CHECK(ahead.aheadNs(1400, 0) == 200);
    CHECK(ahead.aheadNs(2000, 0) == 200);
    ahead.add(part(3, 0, 100, 3000));
    CHECK(ahead.aheadNs(3000, 0) == 300);
}

TEST_CASE("a part without a prediction counts as the lead")
{
    WorkAhead ahead = twoRanks();
    ahead.add(part(1, 0, 0, 1000));
    CHECK(ahead.aheadNs(1000, 0) == lead);
    ahead.setLeadNs(200);
    CHECK(ahead.aheadNs(1000, 0) == 200);
}

TEST_CASE("a rank sees the work of its own lanes and of the ranks before it, not after")
{
    WorkAhead ahead = twoRanks();
    ahead.add(part(1, 2, 400, 1000)); // rank 1
    CHECK(ahead.aheadNs(1000, 0) == 0);
    CHECK_FALSE(ahead.busy(0));
    CHECK(ahead.aheadNs(1000, 1) == 400);
    ahead.add(part(2, 1, 100, 1000)); // rank 0: ahead of rank 1 too
    CHECK(ahead.aheadNs(1000, 0) == 100);
    CHECK(ahead.aheadNs(1000, 1) == 500);
    CHECK(ahead.busy(0));
}

TEST_CASE("a part takes the lane whose work ends first")
{
    WorkAhead ahead = twoRanks();
    CHECK(ahead.laneFor({0, 1}, 1000) == 0); // both idle: the first
    ahead.add(part(1, 0, 300, 1000));
    CHECK(ahead.laneFor({0, 1}, 1000) == 1);
    ahead.add(part(2, 1, 500, 1000));
    CHECK(ahead.laneFor({0, 1}, 1000) == 0); // 1300 against 1500
    CHECK(ahead.laneFor({1}, 1000) == 1);    // a session with one lane keeps it
}

TEST_CASE("a part seen to end held the GPU from its start to its end, and the next starts no earlier")
{
    WorkAhead ahead = twoRanks();
    const uint64_t first = ahead.add(part(1, 0, 300, 1000));
    const uint64_t second = ahead.add(part(2, 0, 300, 1100));
    const auto ended = ahead.complete(first, 1400);
    REQUIRE(ended);
    CHECK(ended->part.frame == 1);
    CHECK(ended->held_ns == 400); // 1000 to 1400
    // The second started when the first ended, not at its enqueue.
    CHECK(ahead.aheadNs(1400, 0) == 300);
    // Enqueued after the GPU ran out: from its own enqueue.
    ahead.complete(second, 1700);
    ahead.add(part(3, 0, 100, 3000));
    CHECK(ahead.aheadNs(3000, 0) == 100);
    CHECK_FALSE(ahead.complete(second, 1800)); // seen once already
    CHECK_FALSE(ahead.empty());
}

TEST_CASE("a frame's other parts are found by its serial, and clear forgets everything")
{
    WorkAhead ahead = twoRanks();
    const uint64_t a = ahead.add(part(5, 0, 100, 0, false));
    const uint64_t b = ahead.add(part(6, 1, 100, 0));
    const uint64_t c = ahead.add(part(5, 1, 100, 0, true));
    CHECK(ahead.otherParts(5, c) == std::vector<uint64_t>{a});
    CHECK(ahead.otherParts(6, b).empty());
    REQUIRE(ahead.find(c));
    CHECK(ahead.find(c)->last);
    ahead.clear();
    CHECK(ahead.empty());
    CHECK_FALSE(ahead.find(a));
}
