// The live ranges of a session's intermediates (memory::liveRanges) over the dispatches
// that bind them, against ranges worked out by hand.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "memory/intermediate_planner.hpp"

using namespace framecl::memory;

TEST_CASE("no dispatches and no intermediates give no live ranges")
{
    CHECK(liveRanges({}, 0).empty());
}

TEST_CASE("a chain of three dispatches: each intermediate lives from its writer to its reader")
{
    // Dispatch 0 writes 0; dispatch 1 reads 0 and writes 1; dispatch 2 reads 1.
    const std::vector<std::vector<uint32_t>> bound = {{0}, {0, 1}, {1}};
    CHECK(liveRanges(bound, 2) == std::vector<LiveRange>{{0, 1}, {1, 2}});
}

TEST_CASE("an intermediate read again by a later dispatch lives until that one")
{
    // Dispatch 0 writes 0, which dispatch 1 reads to write 1 and dispatch 3 reads again
    // beside 2, which dispatch 2 wrote from 1.
    const std::vector<std::vector<uint32_t>> bound = {{0}, {0, 1}, {1, 2}, {2, 0}};
    CHECK(liveRanges(bound, 3) == std::vector<LiveRange>{{0, 3}, {1, 2}, {2, 3}});
}

TEST_CASE("an intermediate written twice lives from its first write to its last read")
{
    // Dispatches 1 and 2 both write 0 (the second reads and writes it, bound twice);
    // dispatch 3 reads it. Dispatch 0 binds none.
    const std::vector<std::vector<uint32_t>> bound = {{}, {0}, {0, 0}, {0}};
    CHECK(liveRanges(bound, 1) == std::vector<LiveRange>{{1, 3}});
}

TEST_CASE("an intermediate that no dispatch binds gets [0, 0]")
{
    const std::vector<std::vector<uint32_t>> bound = {{0}, {0}, {2}};
    CHECK(liveRanges(bound, 3) == std::vector<LiveRange>{{0, 1}, {0, 0}, {2, 2}});
}
