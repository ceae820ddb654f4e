#pragma once
// How the GPU work a session does while it opens — its calibration slices, its
// recording's first run, the tuner's timed frames — reaches the GPU. In framecld each
// piece takes its turn from the scheduler among the clients' frame parts, charged to the
// client that asked for the session (docs/architecture.md, "Scheduling"): it goes only
// when that client's turn comes and the work ahead is within the lead, and while it
// runs the scheduler counts it as work ahead, so the work of a session being opened
// delays another client's frame as much as the opening client's frames would. Without
// a scheduler (the CLI's in-process mode, framecl-bench) it is enqueued at once.

#include <cstdint>
#include <functional>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "gpu/context.hpp"

namespace framecl::pipeline {

// Enqueues one piece of work and returns the event that ends it.
using EnqueueWork = std::function<Result<cl::Event>()>;

class GpuTurns {
public:
    // Calls `enqueue` once the scheduler gives the piece its turn (on the scheduler's
    // thread, the caller blocked meanwhile) and returns what it returned.
    // `predicted_ns`: the piece's predicted GPU time, 0 where there is none (it then
    // waits until the GPU is seen to be idle); `lane`: where `enqueue` puts it. Fails
    // with cancelled_text where the opening was cancelled before the turn came; nothing
    // was enqueued then.
    virtual Result<cl::Event> enqueueInTurn(uint64_t predicted_ns, uint32_t lane, const EnqueueWork& enqueue) = 0;

protected:
    ~GpuTurns() = default;
};

// `enqueue` through `turns`; where there are none, at once and flushed.
Result<cl::Event> enqueueInTurn(GpuTurns* turns, const gpu::GpuContext& gpu, uint64_t predicted_ns, uint32_t lane,
                                const EnqueueWork& enqueue);

} // namespace framecl::pipeline
