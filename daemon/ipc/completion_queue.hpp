#pragma once
// Hands GPU completions from the OpenCL runtime's callback thread to the main loop:
// the callback records which frame finished and wakes an eventfd the loop watches.
// Nothing on the frame path blocks waiting for the GPU.

#include <cstdint>
#include <mutex>
#include <vector>

#include <CL/cl.h>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::ipc {

struct Completion {
    uint64_t frame;        // the in-flight frame's serial number
    cl_int execution_status; // CL_COMPLETE, or a negative error from the device
};

class CompletionQueue {
public:
    CompletionQueue();

    // Readable when completions are waiting.
    int fd() const { return event_fd_.get(); }

    // Calls back (on a runtime thread) when `event` completes, queueing `frame`.
    Result<void> notifyOnCompletion(cl_event event, uint64_t frame);

    // Every completion queued so far; clears the eventfd.
    std::vector<Completion> take();

private:
    static void CL_CALLBACK onEvent(cl_event event, cl_int status, void* user_data);
    void push(Completion completion);

    UniqueFd event_fd_;
    std::mutex mutex_;
    std::vector<Completion> pending_;
};

} // namespace framecl::ipc
