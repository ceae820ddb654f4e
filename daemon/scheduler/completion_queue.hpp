#pragma once
// Hands GPU completions to the main loop: a thread per lane of the GPU waits for the
// events watched on that lane in turn and wakes an eventfd the loop watches. Nothing on
// the frame path blocks the loop waiting for the GPU.
//
// A waiting thread rather than clSetEventCallback: NVIDIA's runtime calls back long after
// the GPU has finished (docs/benchmarks.md, "A frame's hops"), where clWaitForEvents
// returns at once. Each lane is an in-order queue, so what runs
// on it completes in the order it is watched; a thread per lane keeps a short part on
// one lane from being seen late behind a long one on the other.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include <CL/opencl.hpp>

#include "base/unique_fd.hpp"

namespace framecl::scheduler {

struct Completion {
    uint64_t frame;          // the in-flight frame's serial number
    cl_int execution_status; // CL_COMPLETE, or a negative error from the device
    uint64_t callback_ns;    // CLOCK_MONOTONIC when the waiting thread saw it complete
};

class CompletionQueue {
public:
    explicit CompletionQueue(uint32_t lanes = 1);
    // Stops watching. The thread may be waiting for an event still on the GPU (a
    // daemon torn down with frames in flight); it finishes that wait on state it shares,
    // not on this object, and ends.
    ~CompletionQueue();
    CompletionQueue(const CompletionQueue&) = delete;
    CompletionQueue& operator=(const CompletionQueue&) = delete;

    // Readable when completions are waiting.
    int fd() const { return shared_->event_fd.get(); }

    // Queues `frame` once `event`, enqueued on lane `lane` (< lanes), completes; the
    // events of one lane complete in the order given.
    void notifyOnCompletion(const cl::Event& event, uint64_t frame, uint32_t lane = 0);

    // Every completion queued so far; clears the eventfd.
    std::vector<Completion> take();

private:
    struct Watched {
        cl::Event event;
        uint64_t frame;
    };
    // What the thread touches, alive as long as the thread is.
    struct Shared {
        UniqueFd event_fd;
        std::mutex mutex;
        std::condition_variable wake;
        std::vector<std::deque<Watched>> watched; // per lane
        std::vector<Completion> done;
        bool stopping = false;
    };

    static void waitInTurn(std::shared_ptr<Shared> shared, uint32_t lane);

    std::shared_ptr<Shared> shared_;
};

} // namespace framecl::scheduler
