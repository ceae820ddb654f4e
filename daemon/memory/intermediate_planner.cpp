// The live ranges of a session's intermediates, from the dispatches that bind them, and
// their placement (docs/architecture.md, "Memory"; guide §9.1.6): first
// into on-chip global memory, then into device buffers shared by intermediates whose
// live ranges do not overlap. The planner is plain greedy, not optimal: it runs once
// per session open, must be deterministic so that a session's plan can be reproduced
// from its uses, and should be simple enough to check by eye.
#include "memory/intermediate_planner.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

namespace framecl::memory {
namespace {

constexpr uint64_t max_bytes = std::numeric_limits<uint64_t>::max();

// Live ranges are inclusive: an intermediate written by dispatch 1 and one read by
// dispatch 1 are both alive during dispatch 1, so they may not share memory.
bool liveRangesOverlap(const IntermediateUse& a, const IntermediateUse& b)
{
    return a.first <= b.last && b.first <= a.last;
}

// Saturates instead of wrapping, so that sizes near 2^64 compare as "too large" rather
// than as small.
uint64_t saturatingAdd(uint64_t a, uint64_t b)
{
    return a > max_bytes - b ? max_bytes : a + b;
}

uint64_t roundUp(uint64_t bytes, uint64_t alignment)
{
    const uint64_t remainder = bytes % alignment;
    return remainder == 0 ? bytes : saturatingAdd(bytes, alignment - remainder);
}

// Indices of `uses` in the order both passes consider them: by first use, ties larger
// first (the big ones get the low offsets and the buffers they fit, the small ones fill
// the gaps), remaining ties by index so that the plan depends on the input alone.
std::vector<size_t> placementOrder(const std::vector<IntermediateUse>& uses)
{
    std::vector<size_t> order(uses.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (uses[a].first != uses[b].first)
            return uses[a].first < uses[b].first;
        return uses[a].bytes > uses[b].bytes;
    });
    return order;
}

// A byte range [begin, end) taken in on-chip memory by a placed intermediate.
struct OnchipRange {
    uint64_t begin;
    uint64_t end;
};

// The lowest offset, a multiple of the alignment, at which `packed_bytes` overlap none
// of `taken`. Every taken range starts at a multiple of the alignment and its length is
// rounded up to one, so the candidates (0 and the ends of taken ranges) are all aligned.
uint64_t lowestFreeOffset(std::vector<OnchipRange> taken, uint64_t packed_bytes)
{
    std::sort(taken.begin(), taken.end(),
              [](const OnchipRange& a, const OnchipRange& b) { return a.begin < b.begin; });
    // Everything before `offset` is covered by a range already passed; the ranges still
    // ahead start no lower than the current one, so the first gap that fits is the
    // lowest.
    uint64_t offset = 0;
    for (const OnchipRange& range : taken) {
        if (saturatingAdd(offset, packed_bytes) <= range.begin)
            break;
        offset = std::max(offset, range.end);
    }
    return offset;
}

// Places on-chip, in `order`, every intermediate that fits; returns the indices of
// those that do not, in the same order.
std::vector<size_t> placeOnchip(const std::vector<IntermediateUse>& uses,
                                const std::vector<size_t>& order, uint64_t capacity,
                                uint64_t alignment, IntermediatePlan& plan)
{
    std::vector<size_t> placed;
    std::vector<size_t> rest;
    for (size_t index : order) {
        const IntermediateUse& use = uses[index];
        if (!use.onchip_allowed) {
            rest.push_back(index);
            continue;
        }
        const uint64_t packed_bytes = roundUp(use.bytes, alignment);
        // Only ranges that take bytes can collide; a zero-byte intermediate takes none
        // and lands at offset 0.
        std::vector<OnchipRange> taken;
        for (size_t other : placed) {
            const uint64_t begin = plan.placements[other].offset;
            const uint64_t end = saturatingAdd(begin, roundUp(uses[other].bytes, alignment));
            if (begin != end && liveRangesOverlap(use, uses[other]))
                taken.push_back({begin, end});
        }
        const uint64_t offset = lowestFreeOffset(std::move(taken), packed_bytes);
        // The padding up to the alignment only spaces placements apart; the
        // intermediate's own bytes are what must fit within the capacity.
        if (use.bytes > capacity || offset > capacity - use.bytes) {
            rest.push_back(index);
            continue;
        }
        plan.placements[index].onchip = true;
        plan.placements[index].offset = offset;
        plan.onchip_bytes = std::max(plan.onchip_bytes, offset + use.bytes);
        placed.push_back(index);
    }
    return rest;
}

// Greedy interval colouring, in order of first use. Because every earlier user of a
// buffer started no later than the current intermediate, a buffer is free for it
// exactly when the last dispatch of the buffer's users comes before its first one; and
// a buffer is added only when every existing one holds an intermediate live at that
// first dispatch, so the number of buffers never exceeds the number of intermediates
// alive at once. A zero-byte intermediate is coloured like any other, so a buffer whose
// users are all zero-byte has size 0.
void placeInDeviceBuffers(const std::vector<IntermediateUse>& uses,
                          const std::vector<size_t>& order, IntermediatePlan& plan)
{
    std::vector<uint32_t> busy_until; // per buffer: the last dispatch of its users
    for (size_t index : order) {
        const IntermediateUse& use = uses[index];
        // Among the free buffers, the smallest that is already big enough wastes the
        // least; if none is, growing the largest adds the fewest bytes. Ties go to the
        // lowest index.
        std::optional<uint32_t> fitting;
        std::optional<uint32_t> largest;
        for (uint32_t buffer = 0; buffer < busy_until.size(); ++buffer) {
            if (busy_until[buffer] >= use.first)
                continue;
            const uint64_t size = plan.buffer_sizes[buffer];
            if (size >= use.bytes && (!fitting || size < plan.buffer_sizes[*fitting]))
                fitting = buffer;
            if (!largest || size > plan.buffer_sizes[*largest])
                largest = buffer;
        }
        std::optional<uint32_t> chosen = fitting ? fitting : largest;
        if (!chosen) {
            chosen = uint32_t(plan.buffer_sizes.size());
            plan.buffer_sizes.push_back(0);
            busy_until.push_back(0);
        }
        plan.buffer_sizes[*chosen] = std::max(plan.buffer_sizes[*chosen], use.bytes);
        busy_until[*chosen] = use.last;
        plan.placements[index].buffer = *chosen;
    }
}

} // namespace

std::vector<LiveRange> liveRanges(const std::vector<std::vector<uint32_t>>& bound, size_t count)
{
    std::vector<LiveRange> ranges(count, LiveRange{std::numeric_limits<uint32_t>::max(), 0});
    for (uint32_t dispatch = 0; dispatch < bound.size(); ++dispatch)
        for (uint32_t i : bound[dispatch]) {
            ranges[i].first = std::min(ranges[i].first, dispatch);
            ranges[i].last = std::max(ranges[i].last, dispatch);
        }
    for (LiveRange& range : ranges)
        if (range.first > range.last) // bound by no dispatch
            range = {0, 0};
    return ranges;
}

IntermediatePlan planIntermediates(const std::vector<IntermediateUse>& uses,
                                   uint64_t onchip_capacity, uint64_t alignment)
{
    IntermediatePlan plan;
    plan.placements.resize(uses.size());
    const std::vector<size_t> order = placementOrder(uses);
    // An alignment of 0 means the device asks for none.
    const uint64_t packing_alignment = std::max<uint64_t>(alignment, 1);
    // With no on-chip memory (capacity 0, or no extension) nothing goes there, not even
    // a zero-byte intermediate: the caller then never creates an on-chip buffer.
    const std::vector<size_t> rest =
        onchip_capacity > 0 ? placeOnchip(uses, order, onchip_capacity, packing_alignment, plan)
                            : order;
    placeInDeviceBuffers(uses, rest, plan);
    return plan;
}

} // namespace framecl::memory
