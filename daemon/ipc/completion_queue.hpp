#pragma once
// Hands GPU completions from the OpenCL runtime's callback thread to the main loop:
// the callback records which frame finished and wakes an eventfd the loop watches.
// Nothing on the frame path blocks waiting for the GPU.

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <CL/cl.h>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::ipc {

struct Completion {
    uint64_t frame;        // the in-flight frame's serial number
    cl_int execution_status; // CL_COMPLETE, or a negative error from the device
    uint64_t callback_ns;  // CLOCK_MONOTONIC when the runtime called back
};

class CompletionQueue {
public:
    CompletionQueue();

    // Readable when completions are waiting.
    int fd() const { return shared_->event_fd.get(); }

    // Calls back (on a runtime thread) when `event` completes, queueing `frame`.
    Result<void> notifyOnCompletion(cl_event event, uint64_t frame);

    // Every completion queued so far; clears the eventfd.
    std::vector<Completion> take();

private:
    // What a callback touches. Each pending callback holds a reference: a runtime may
    // call back after the queue is gone — clFinish waits for the commands, not for their
    // callbacks (OpenCL 3.0, clSetEventCallback) — and then writes to this, not to
    // freed memory.
    struct Shared {
        UniqueFd event_fd;
        std::mutex mutex;
        std::vector<Completion> pending;
    };
    struct CallbackContext {
        std::shared_ptr<Shared> shared;
        uint64_t frame;
    };

    static void CL_CALLBACK onEvent(cl_event event, cl_int status, void* user_data);

    std::shared_ptr<Shared> shared_;
};

} // namespace framecl::ipc
