#pragma once
// Dispatches as Chrome trace JSON (the "Trace Event Format" that chrome://tracing and
// Perfetto open), for `framecl trace --seconds N -o trace.json` (issue 6,
// "Observability"):
//
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {"slices_left_out": n}}
//
// framecld is one process (pid 1, named "framecld"); each client is one thread of it,
// so Perfetto shows one lane per client, named "<client name> (client <id>)". Each
// dispatch or tile is a complete event ("ph": "X") on its client's lane, with "ts" and
// "dur" in microseconds (fractional, so nanoseconds survive), "ts" counted from the
// earliest slice, and args {session, pipeline, stage, sequence}.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace framecl::scheduler {

// One dispatch (or one tile of a dispatch) as the GPU ran it.
struct TraceSlice {
    uint64_t client = 0;     // the lane: ClientState::id (small, counted from 1)
    std::string client_name; // as given at Hello; may be empty
    uint32_t session = 0;
    std::string pipeline;
    uint32_t stage = 0;
    std::string name;        // "sobel_3x3 tile 2/5"
    uint64_t sequence = 0;   // the frame's sequence, as the client chose it
    uint64_t start_ns = 0;   // profiling timestamps (CL_PROFILING_COMMAND_START/END)
    uint64_t end_ns = 0;
};

// The trace of `slices`, events in their order after the metadata events. Strings that
// are not valid UTF-8 (client names come from clients) have the bad bytes replaced by
// U+FFFD. `slices_left_out` is written to "otherData" so a reader sees a capped trace.
std::string chromeTraceJson(const std::vector<TraceSlice>& slices, uint64_t slices_left_out = 0);

// Collects the slices of one `framecl trace --seconds N` window. The caller checks
// open() and adds the dispatches that ran while it was open; past `max_slices` they are
// only counted, which bounds the memory a long window at a high frame rate can take.
// Each slice is kept in a few dozen bytes: its strings (client, pipeline and dispatch
// names, repeated by every frame) are stored once per window and referred to by index.
// Not thread-safe.
class TraceWindow {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr size_t kDefaultMaxSlices = 1'000'000;

    explicit TraceWindow(Clock::time_point ends, size_t max_slices = kDefaultMaxSlices);

    // True until `ends`.
    bool open(Clock::time_point now) const { return now < ends_; }
    Clock::time_point ends() const { return ends_; }

    void add(const TraceSlice& slice);

    // chromeTraceJson() of the slices kept, with the count of those left out.
    std::string json() const;

    size_t size() const { return slices_.size(); }
    uint64_t slicesLeftOut() const { return left_out_; }
    // The bytes the slices and their strings take.
    size_t bytesHeld() const;

private:
    struct StoredSlice {
        uint64_t client;
        uint64_t sequence;
        uint64_t start_ns, end_ns;
        uint32_t session;
        uint32_t stage;
        uint32_t pipeline; // index into strings_
        uint32_t name;     // index into strings_
    };
    uint32_t intern(const std::string& text);

    Clock::time_point ends_;
    size_t max_slices_;
    std::vector<StoredSlice> slices_;
    std::vector<std::string> strings_;
    std::map<std::string, uint32_t, std::less<>> string_index_;
    std::map<uint64_t, std::string> lane_names_; // by client, from its first slice
    uint64_t left_out_ = 0;
};

} // namespace framecl::scheduler
