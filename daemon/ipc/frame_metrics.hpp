#pragma once
// A session's recent frames for `framecl stats`: latency percentiles and frame rate
// over the last frames, in a fixed ring so a long-running session costs nothing more.

#include <array>
#include <cstddef>
#include <cstdint>

namespace framecl::ipc {

struct LatencySummary {
    double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

class FrameMetrics {
public:
    // A frame that completed at `end_ns` after `latency_ns` from its Submit.
    void add(uint64_t end_ns, uint64_t latency_ns);

    // Over the frames in the ring (nearest rank); zeros when there are none.
    LatencySummary latency() const;
    // Frames per second over the ring's frames that ended within `window_ns` before
    // `now_ns`; 0 with fewer than two.
    double fps(uint64_t now_ns, uint64_t window_ns) const;

private:
    static constexpr size_t capacity = 512;
    struct Sample {
        uint64_t end_ns, latency_ns;
    };
    std::array<Sample, capacity> ring_{};
    size_t count_ = 0; // samples held, at most capacity
    size_t next_ = 0;  // where the next sample goes
};

} // namespace framecl::ipc
