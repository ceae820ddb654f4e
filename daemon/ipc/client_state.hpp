#pragma once
// What framecld holds for one connected client.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <sys/socket.h>

#include "base/unique_fd.hpp"
#include "framecl_generated.h"
#include "ipc/frame_metrics.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/session.hpp"
#include "scheduler/frame_scheduler.hpp"

namespace framecl::ipc {

struct SessionCounters {
    uint64_t done = 0;
    uint64_t failed = 0;
    uint64_t dropped = 0; // past the deadline, or pushed out by drop_oldest
    uint64_t busy = 0;
};

struct SessionState {
    // Shared with frames in flight, so a session closed mid-frame lives until they end.
    std::shared_ptr<pipeline::Session> session;
    std::string recording; // how frames are replayed: "qcom", "khr" or "off"
    wire::Backpressure backpressure = wire::Backpressure::Block;
    uint64_t deadline_ns = 0; // 0: none
    // The stages' parameters as the last Submit left them: the next frame's, unless its
    // Submit changes them.
    std::shared_ptr<const pipeline::ParameterSet> parameters;
    SessionCounters counters;
    FrameMetrics metrics;
    uint32_t in_flight = 0; // accepted and not yet done: waiting or on the GPU
};

// A Submit of a `block` session that came while its client was at its limit: it is
// taken, checked anew, when one of the client's frames ends.
struct HeldSubmit {
    uint32_t session;
    uint32_t input_buffer;
    uint32_t output_buffer;
    uint64_t sequence;
    uint64_t queued_ns;
    uint64_t arrival; // its place among every Submit the daemon received, in order
    // The sync_file the Submit carried: the frame starts once it signals (shared, as
    // held Submits are copied); null: none.
    std::shared_ptr<UniqueFd> acquire_fence;
    bool release_fence = false; // asked for: FrameAccepted brings it when the frame is accepted
    std::shared_ptr<const pipeline::ParameterSet> parameters{}; // as the Submit left them
};

// A fence a frame waits for before its first part goes to the GPU (ipc/fence_waits.cpp).
struct PendingFence {
    UniqueFd sync_file; // watched by the loop until readable
    std::string what;   // "input buffer 3's writers", as the frame's error would name it
};

// A frame accepted with fences not yet signalled, or with a buffer that an earlier
// frame of its client still uses: it holds its slot (in flight) and, with the client's
// later frames, waits in order to be handed to the scheduler.
struct FencedFrame {
    scheduler::Frame frame;
    std::vector<PendingFence> fences; // still pending
    std::string failure;              // a fence signalled an error: the frame ends Failed
    uint64_t give_up_ns;              // its deadline, or limits.max_fence_wait_ms after it came
    bool waited_for_buffers = false;  // counted in buffer_waits
};

// How many of a client's frames at the scheduler (handed over, not yet ended) read and
// write one of its buffers (ipc/fence_waits.cpp, "buffer order").
struct BufferUse {
    uint32_t reads = 0;
    uint32_t writes = 0;
};

struct ClientState {
    uint64_t id = 0;      // the fair queue's and the trace's name for it
    std::string token;
    std::string identity; // the ZeroMQ routing id of its DEALER socket
    std::string name;
    std::string client_class; // the [[client_class]] it matched; empty: none
    uint32_t weight = 1;
    // The GPU lane at its class's gpu_priority (gpu::GpuContext::priorityLane), which the
    // sessions it opens run on; none: the daemon's lanes.
    std::optional<uint32_t> priority_lane;
    std::optional<ucred> peer;  // once the buffer socket is bound
    UniqueFd buffer_connection; // its lifetime is the client's
    std::map<uint32_t, std::shared_ptr<memory::ImportedBuffer>> buffers;
    uint64_t buffer_bytes = 0;  // of its buffers; with session_bytes, within limits.max_bytes_per_client
    uint64_t session_bytes = 0; // device memory of its sessions: intermediates and plan constants
    // Released buffers and closed sessions that frames in flight still hold: their bytes
    // count until the last such frame ends (retireUnused()), or a client could hold
    // several times its limit by releasing and registering again while frames run.
    std::vector<std::shared_ptr<memory::ImportedBuffer>> retired_buffers;
    std::vector<std::shared_ptr<pipeline::Session>> retired_sessions;
    std::map<uint32_t, SessionState> sessions;
    uint32_t sessions_opening = 0; // asked for and being opened: count against the limit
    uint32_t next_session = 1;
    uint32_t in_flight = 0; // accepted and not yet done, over all its sessions
    std::deque<HeldSubmit> held;
    // Accepted, waiting for fences or for earlier frames: handed to the scheduler from
    // the front, in order.
    std::deque<FencedFrame> fenced;
    std::map<const memory::ImportedBuffer*, BufferUse> buffers_in_use;
    uint64_t fence_waits = 0;  // frames that found a fence pending and waited for it
    uint64_t buffer_waits = 0; // frames that waited for an earlier frame using their buffers
    uint64_t gpu_ns = 0; // GPU time of its frames so far
    uint64_t dones_unsent = 0; // dropped because its buffer socket was full: it does not read
};

} // namespace framecl::ipc
