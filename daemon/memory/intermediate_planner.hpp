#pragma once
// Where a session's intermediates live (docs/architecture.md, "Memory"): planned once at session
// open by their live ranges over the session's dispatches, so buffers whose ranges do
// not overlap share memory.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace framecl::memory {

// An intermediate written first by dispatch `first` and read last by dispatch `last`
// (indices into the session's dispatches, first <= last). `onchip_allowed` false keeps
// it in device memory: the session cuts its recording where it is alive
// (docs/architecture.md, "Scheduling").
struct IntermediateUse {
    uint64_t bytes;
    uint32_t first;
    uint32_t last;
    bool onchip_allowed = true;
};

// The dispatches an intermediate is alive during, inclusive: from the first that binds
// it to the last (IntermediateUse's `first` and `last`).
struct LiveRange {
    uint32_t first = 0;
    uint32_t last = 0;

    bool operator==(const LiveRange&) const = default;
};

// The live range of each of `count` intermediates over a session's dispatches, in
// order: `bound[d]` lists the intermediates dispatch d writes or reads (indices below
// `count`, in any order, repeats allowed). One that no dispatch binds gets [0, 0].
std::vector<LiveRange> liveRanges(const std::vector<std::vector<uint32_t>>& bound, size_t count);

struct Placement {
    bool onchip = false;
    uint64_t offset = 0;  // on-chip: byte offset in on-chip global memory
    uint32_t buffer = 0;  // otherwise: index into IntermediatePlan::buffer_sizes
};

struct IntermediatePlan {
    std::vector<Placement> placements;  // one per IntermediateUse, same order
    std::vector<uint64_t> buffer_sizes; // device buffers to allocate, each reused
    uint64_t onchip_bytes = 0;          // on-chip memory used: max over offset + size
};

// Guide §9.1 (cl_qcom_onchip_global_memory): with `onchip_capacity` > 0, every
// intermediate allowed there that fits goes on-chip, at offsets (multiples of `alignment`) chosen so
// that no two whose live ranges overlap share a byte, all within the capacity; the
// rest, and all of them when the capacity is 0, go to device buffers, each buffer
// shared by intermediates whose live ranges do not overlap.
IntermediatePlan planIntermediates(const std::vector<IntermediateUse>& uses, uint64_t onchip_capacity,
                                   uint64_t alignment);

} // namespace framecl::memory
