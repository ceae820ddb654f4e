#pragma once
// Inside the pipeline layer: what a session recorded for its current tile plan, shared
// by the session and by each frame that ran it (pipeline/session.hpp, EnqueuedFrame).

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/replay.hpp"

namespace framecl::pipeline {

// One recorded dispatch: tile `index` of `count` of session dispatch `dispatch`.
struct RecordedTile {
    uint32_t dispatch;
    uint32_t index;
    uint32_t count;
    uint64_t items; // its work items
};

// The recorded dispatches [first, end), recorded for the mode as one unit: the
// scheduler may put other work between two parts (pipeline/tile_plan.hpp, PartRange).
struct RecordedPart {
    std::unique_ptr<gpu::Replay> replay;
    uint32_t first;
    uint32_t end;
};

struct RecordedSequence {
    std::vector<RecordedPart> parts; // in order, covering every recorded dispatch
    std::vector<RecordedTile> tiles; // one per recorded dispatch, in order
    // The recorded dispatches of session dispatch d are first_tile[d] up to
    // first_tile[d + 1]; one entry more than the session has dispatches.
    std::vector<uint32_t> first_tile;
    // Whether each recorded dispatch has an event of its own (recording off); else the
    // frame has one event per part.
    bool events_per_tile = false;
    uint64_t frames_enqueued = 0;
};

} // namespace framecl::pipeline
