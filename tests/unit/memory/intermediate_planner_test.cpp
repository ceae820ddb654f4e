// The intermediate planner (guide §9.1.6) against a brute-force check of what a plan
// must satisfy, written from the header's contract rather than from the planner.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "memory/intermediate_planner.hpp"

using namespace framecl::memory;

namespace {

bool alive(const IntermediateUse& use, uint32_t dispatch)
{
    return use.first <= dispatch && dispatch <= use.last;
}

// Inclusive ranges: both alive at some dispatch.
bool conflict(const IntermediateUse& a, const IntermediateUse& b)
{
    for (uint32_t dispatch = a.first; dispatch <= a.last; ++dispatch)
        if (alive(b, dispatch))
            return true;
    return false;
}

// The most intermediates alive during any one dispatch.
size_t maxAliveAtOnce(const std::vector<IntermediateUse>& uses)
{
    size_t most = 0;
    for (const IntermediateUse& use : uses) {
        const auto count =
            std::count_if(uses.begin(), uses.end(),
                          [&](const IntermediateUse& other) { return alive(other, use.first); });
        most = std::max(most, size_t(count));
    }
    return most;
}

// Every property of a valid plan, checked pair by pair.
void checkPlan(const std::vector<IntermediateUse>& uses, uint64_t capacity, uint64_t alignment,
               const IntermediatePlan& plan)
{
    REQUIRE(plan.placements.size() == uses.size());
    const uint64_t step = alignment == 0 ? 1 : alignment;
    uint64_t onchip_end = 0;
    std::vector<bool> buffer_used(plan.buffer_sizes.size(), false);
    for (size_t i = 0; i < uses.size(); ++i) {
        const Placement& p = plan.placements[i];
        if (p.onchip) {
            CHECK(capacity > 0);
            CHECK(p.offset % step == 0);
            CHECK(p.offset + uses[i].bytes <= capacity);
            onchip_end = std::max(onchip_end, p.offset + uses[i].bytes);
        } else {
            REQUIRE(p.buffer < plan.buffer_sizes.size());
            CHECK(plan.buffer_sizes[p.buffer] >= uses[i].bytes);
            buffer_used[p.buffer] = true;
        }
        for (size_t j = i + 1; j < uses.size(); ++j) {
            const Placement& q = plan.placements[j];
            if (!conflict(uses[i], uses[j]) || p.onchip != q.onchip)
                continue;
            if (p.onchip) {
                const bool disjoint =
                    p.offset + uses[i].bytes <= q.offset || q.offset + uses[j].bytes <= p.offset;
                CHECK(disjoint);
            } else {
                CHECK(p.buffer != q.buffer);
            }
        }
    }
    CHECK(plan.onchip_bytes == onchip_end);
    CHECK(std::all_of(buffer_used.begin(), buffer_used.end(), [](bool used) { return used; }));
}

} // namespace

TEST_CASE("no intermediates give an empty plan")
{
    const IntermediatePlan plan = planIntermediates({}, 4096, 64);
    CHECK(plan.placements.empty());
    CHECK(plan.buffer_sizes.empty());
    CHECK(plan.onchip_bytes == 0);
}

TEST_CASE("two intermediates of a chain of three stages, alive together at the middle dispatch, "
          "do not share a device buffer")
{
    const std::vector<IntermediateUse> uses = {{1000, 0, 1}, {2000, 1, 2}};
    const IntermediatePlan plan = planIntermediates(uses, 0, 64);
    checkPlan(uses, 0, 64, plan);
    CHECK(plan.buffer_sizes == std::vector<uint64_t>{1000, 2000});
}

TEST_CASE("intermediates whose live ranges do not overlap share one device buffer sized for the "
          "largest")
{
    const std::vector<IntermediateUse> uses = {{1000, 0, 1}, {2000, 2, 3}};
    const IntermediatePlan plan = planIntermediates(uses, 0, 64);
    checkPlan(uses, 0, 64, plan);
    CHECK(plan.buffer_sizes == std::vector<uint64_t>{2000});
    CHECK(plan.placements[0].buffer == 0);
    CHECK(plan.placements[1].buffer == 0);
}

TEST_CASE("intermediates that all fit on-chip are packed from offset 0 at aligned offsets")
{
    // B overlaps A and C, which do not overlap each other: C reuses A's bytes.
    const std::vector<IntermediateUse> uses = {{100, 0, 1}, {300, 1, 2}, {50, 2, 3}};
    const IntermediatePlan plan = planIntermediates(uses, 4096, 256);
    checkPlan(uses, 4096, 256, plan);
    for (const Placement& p : plan.placements)
        CHECK(p.onchip);
    CHECK(plan.placements[0].offset == 0);
    CHECK(plan.placements[1].offset == 256);
    CHECK(plan.placements[2].offset == 0);
    CHECK(plan.onchip_bytes == 556);
    CHECK(plan.buffer_sizes.empty());
}

TEST_CASE("intermediates that do not fit in the on-chip memory left go to device buffers")
{
    const std::vector<IntermediateUse> uses = {{512, 0, 2}, {512, 0, 2}, {512, 1, 2}, {4096, 3, 4}};
    const IntermediatePlan plan = planIntermediates(uses, 1024, 256);
    checkPlan(uses, 1024, 256, plan);
    CHECK(plan.placements[0].onchip);
    CHECK(plan.placements[1].onchip);
    CHECK_FALSE(plan.placements[2].onchip);
    CHECK_FALSE(plan.placements[3].onchip);
    CHECK(plan.onchip_bytes == 1024);
    CHECK(plan.buffer_sizes == std::vector<uint64_t>{4096});
}

TEST_CASE("an on-chip capacity smaller than every intermediate puts all in device buffers")
{
    const std::vector<IntermediateUse> uses = {{2048, 0, 1}, {4096, 1, 2}};
    const IntermediatePlan plan = planIntermediates(uses, 1024, 64);
    checkPlan(uses, 1024, 64, plan);
    CHECK(plan.onchip_bytes == 0);
    CHECK(plan.buffer_sizes == std::vector<uint64_t>{2048, 4096});
}

TEST_CASE("an on-chip capacity of 0 puts every intermediate in a device buffer")
{
    // The third is free to use either buffer; none is big enough, so the larger grows.
    const std::vector<IntermediateUse> uses = {{64, 0, 1}, {32, 0, 1}, {128, 2, 3}};
    const IntermediatePlan plan = planIntermediates(uses, 0, 64);
    checkPlan(uses, 0, 64, plan);
    for (const Placement& p : plan.placements)
        CHECK_FALSE(p.onchip);
    CHECK(plan.onchip_bytes == 0);
    CHECK(plan.buffer_sizes == std::vector<uint64_t>{128, 32});
    CHECK(plan.placements[2].buffer == 0);
}

TEST_CASE("a zero-byte intermediate goes on-chip at offset 0 and takes no space")
{
    const std::vector<IntermediateUse> uses = {{64, 0, 1}, {0, 0, 1}, {64, 0, 1}};
    const IntermediatePlan plan = planIntermediates(uses, 128, 64);
    checkPlan(uses, 128, 64, plan);
    CHECK(plan.placements[1].onchip);
    CHECK(plan.placements[1].offset == 0);
    CHECK(plan.placements[2].onchip);
    CHECK(plan.onchip_bytes == 128);
}

TEST_CASE("an alignment of 0 packs intermediates byte by byte")
{
    const std::vector<IntermediateUse> uses = {{3, 0, 1}, {5, 0, 1}};
    const IntermediatePlan plan = planIntermediates(uses, 8, 0);
    checkPlan(uses, 8, 0, plan);
    // The larger goes first, at 0; the smaller right after it, unaligned.
    CHECK(plan.placements[1].offset == 0);
    CHECK(plan.placements[0].offset == 5);
    CHECK(plan.onchip_bytes == 8);
}

TEST_CASE("random sets of intermediates get valid plans with no more device buffers than "
          "intermediates alive at once")
{
    std::mt19937 random(20240611);
    const std::vector<uint64_t> alignments = {0, 1, 4, 64, 256};
    const std::vector<uint64_t> capacities = {0, 0, 256, 1024, 4096, 65536};
    auto pick = [&](uint64_t low, uint64_t high) {
        return std::uniform_int_distribution<uint64_t>(low, high)(random);
    };
    for (int round = 0; round < 500; ++round) {
        std::vector<IntermediateUse> uses(pick(0, 24));
        for (IntermediateUse& use : uses) {
            use.bytes = pick(0, 3) == 0 ? pick(0, 64) : pick(0, 4096);
            use.first = uint32_t(pick(0, 15));
            use.last = use.first + uint32_t(pick(0, 5));
        }
        const uint64_t capacity = capacities[pick(0, capacities.size() - 1)];
        const uint64_t alignment = alignments[pick(0, alignments.size() - 1)];
        CAPTURE(round);
        const IntermediatePlan plan = planIntermediates(uses, capacity, alignment);
        checkPlan(uses, capacity, alignment, plan);
        CHECK(plan.buffer_sizes.size() <= maxAliveAtOnce(uses));
    }
}
