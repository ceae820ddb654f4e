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

struct RecordedSequence {
    std::unique_ptr<gpu::Replay> replay;
    std::vector<RecordedTile> tiles; // one per recorded dispatch, in order
    // The recorded dispatches of session dispatch d are first_tile[d] up to
    // first_tile[d + 1]; one entry more than the session has dispatches.
    std::vector<uint32_t> first_tile;
    // Whether each recorded dispatch has an event of its own (recording off); else the
    // frame has one event for the whole recording.
    bool events_per_tile = false;
    uint64_t frames_enqueued = 0;
};

} // namespace framecl::pipeline
