#pragma once
// Opens sessions on a thread of its own. The first session of a stage and frame size
// tunes it (up to seconds), and every session calibrates its tiles and runs its
// recording once on the GPU: work the event loop must not wait for, or every other
// client's frames would (docs/architecture.md, "Scheduling"). The loop hands requests
// over and, when fd() is readable, takes the sessions opened.
//
// The thread enqueues on the GPU's one queue, as the loop does (OpenCL queues are
// thread-safe): each part of a tuning candidate's frame (cut for the kernel budget) and
// each calibration slice is waited for before the next, so a frame queued meanwhile
// waits behind one of them at most. A request
// whose client went away is cancelled (cancel()): taken out of the queue, or, being
// worked on, stopped at the next of those waits; so is the one at work when the
// preparer is destroyed, so that framecld stops within the GPU work in flight.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "gpu/context.hpp"
#include "pipeline/session.hpp"
#include "pipeline/tuner.hpp"

namespace framecl::pipeline {

class SessionPreparer {
public:
    struct Request {
        uint64_t ticket; // the caller's, given back with the session
        std::shared_ptr<const PipelineDefinition> definition;
        FrameShape input;
        SessionOptions options;       // stage_choices filled from the tuner
        std::shared_ptr<Tuner> tuner; // null: gpu.tuning = off
        log::Fields about;            // whose session: the fields of what the thread logs for it
    };
    struct Prepared {
        uint64_t ticket;
        Result<std::unique_ptr<Session>> session;
    };
    // A step of a request begun: what its client may be told while it waits.
    struct Progress {
        uint64_t ticket;
        std::string status;
    };

    explicit SessionPreparer(const gpu::GpuContext& gpu);
    // Cancels the request at work, if any, and drops those behind it.
    ~SessionPreparer();
    SessionPreparer(const SessionPreparer&) = delete;
    SessionPreparer& operator=(const SessionPreparer&) = delete;

    // Readable while sessions wait to be taken.
    int fd() const { return ready_fd_.get(); }
    // Queued behind the requests before it: sessions open in the order asked.
    void prepare(Request request);
    // The requests of `tickets` are not wanted any more: those queued are dropped, the one
    // at work is stopped at its next wait for the GPU. None of them is reported.
    void cancel(const std::vector<uint64_t>& tickets);
    // Every step begun and every session opened (or refused) so far, each in order;
    // clears fd().
    std::pair<std::vector<Progress>, std::vector<Prepared>> take();

private:
    void run();
    // Queues `status` for the request `ticket` and wakes the loop.
    void report(uint64_t ticket, std::string status);
    void wakeLoop();

    const gpu::GpuContext& gpu_;
    UniqueFd ready_fd_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Request> requests_;
    std::vector<Progress> progress_;
    std::vector<Prepared> prepared_;
    uint64_t working_on_ = 0;           // the ticket at work; 0: none
    std::atomic<bool> cancel_working_{false}; // SessionOptions::cancelled of the request at work
    bool stopping_ = false;
    std::thread thread_; // last: it starts once the members above exist
};

} // namespace framecl::pipeline
