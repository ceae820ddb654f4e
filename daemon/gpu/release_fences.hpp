#pragma once
// Release fences (docs/architecture.md, "Fences"): for a frame whose client asks, a
// sync_file that signals once the frame has ended, handed to the client when the frame
// is accepted, before the GPU runs it, so that it can pass the output and its fence on
// to the next consumer without waiting for Done. Each is a binary semaphore of
// cl_khr_external_semaphore exported as a sync_file
// (cl_khr_external_semaphore_sync_fd); its signal is enqueued at once behind a user
// event, the frame's gate, which the daemon completes when the frame ends, after its
// last command completed. The signals go on an out-of-order queue of their own, so that
// one frame's closed gate never holds back another's signal.

#include <memory>
#include <string>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "gpu/context.hpp"

namespace framecl::gpu {

// A frame's gate: the frame holds it, and when the last holder lets go — the frame
// ended, whichever way — the gate completes and the fence signals. A frame that never
// ran signals too: its Done says whether the output is valid.
class ReleaseGate {
public:
    ReleaseGate(cl_event gate, cl_semaphore_khr semaphore, clReleaseSemaphoreKHR_fn release_semaphore);
    ~ReleaseGate();
    ReleaseGate(const ReleaseGate&) = delete;
    ReleaseGate& operator=(const ReleaseGate&) = delete;

private:
    cl_event gate_;
    cl_semaphore_khr semaphore_;
    clReleaseSemaphoreKHR_fn release_semaphore_;
};

class ReleaseFences {
public:
    // Where the device offers them: cl_khr_external_semaphore_sync_fd with sync_fd
    // export and an out-of-order queue. Otherwise why not.
    static Result<std::unique_ptr<ReleaseFences>> open(const GpuContext& gpu);

    struct Fence {
        UniqueFd sync_file;                // for the client
        std::shared_ptr<ReleaseGate> gate; // for the frame
    };
    // A fence for a frame accepted now.
    Result<Fence> create() const;

private:
    ReleaseFences(const GpuContext& gpu, cl::CommandQueue queue) : gpu_(gpu), queue_(std::move(queue)) {}

    const GpuContext& gpu_;
    cl::CommandQueue queue_; // out of order: the signals, each behind its gate
};

} // namespace framecl::gpu
