#pragma once
// The mock camera's stream: a pool of output buffers and one input buffer more,
// registered once, the inputs drawn once when the stream starts (frame i is input i mod
// count), so that the camera's own CPU work does not limit --fps 0; frames submitted at
// a steady rate, each buffer reused only after its frame's Done came back, whatever its
// status (a busy or dropped frame frees its buffers too).

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <framecl/client.h>

#include "base/result.hpp"
#include "synthetic_frame.hpp"

namespace framecl::mock_camera {

struct StreamSettings {
    std::string pipeline;
    framecl_frame_layout input;  // tightly packed
    double fps;                  // 0: as fast as the pool allows
    uint64_t frames;
    uint32_t pool;               // output buffers: at most this many frames in flight
    framecl_allocate_options buffers; // where the buffers come from
    uint32_t seed;
    std::optional<Motion> motion; // the sliding texture instead of bars and square
    int timeout_ms;              // the longest wait for one Done
    framecl_session_options session_options; // backpressure and deadline of the session
    std::optional<std::filesystem::path> dump_dir;
    bool verify;                 // output == input, for the `copy` pipeline
    // Set from a signal handler: submit no more frames, wait for those in flight, report.
    const std::atomic<bool>* stop_requested = nullptr;
};

struct StageTimes {
    std::string name;
    std::vector<uint64_t> gpu_ns; // one per frame that came back ok
};

struct StreamReport {
    uint64_t frames = 0;       // submitted
    bool stopped_early = false; // asked to stop (stop_requested) before the last frame
    uint64_t ok = 0;
    uint64_t failed = 0;       // Done said failed, or the submit itself was refused
    uint64_t lost = 0;         // Done said lost, or no Done came within the timeout
    uint64_t busy = 0;         // refused: too many frames in flight (backpressure)
    uint64_t dropped = 0;      // not started: past the deadline, or pushed out (drop_oldest)
    uint64_t out_of_order = 0; // ok Dones whose sequence is lower than an ok one before
    uint64_t mismatches = 0;   // with verify: outputs that differ from their input
    std::vector<double> latency_ms; // submit to Done received, for frames that came back ok
    std::vector<StageTimes> stages; // in the order the pipeline runs them
    double seconds = 0;        // from the first submit to the last Done
    // The same two moments on CLOCK_MONOTONIC, in seconds: streams run side by side in
    // several processes share one time line (their aggregate frames per second).
    double first_submit_s = 0, last_done_s = 0;
    framecl_buffer_source buffers = FRAMECL_BUFFERS_AUTO; // where the buffers came from
};

// Opens the session, streams, waits for the outstanding Dones and closes the session.
// An error means nothing was streamed (the session or a buffer could not be set up).
// Failures of single frames are counted in the report, and each distinct error text
// is printed once to stderr.
Result<StreamReport> streamFrames(framecl_client* client, const StreamSettings& settings);

} // namespace framecl::mock_camera
