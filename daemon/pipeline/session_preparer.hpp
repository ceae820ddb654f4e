#pragma once
// Opens sessions on a thread of its own. The first session of a stage and frame size
// tunes it (up to seconds), and every session calibrates its tiles and runs its
// recording once on the GPU: work the event loop must not wait for, or every other
// client's frames would (docs/architecture.md, "Scheduling"). The loop hands requests
// over and, when fd() is readable, takes the sessions opened.
//
// The GPU work of an opening goes a piece at a time — a part of a tuning candidate's
// frame (cut for the kernel budget), a calibration slice, a part of the recording's
// first run — each waited for before the next, and each given to the loop's scheduler
// to take its turn among the frames of the clients (GpuTurns): the loop takes it with
// the sessions opened, queues it as work of the client that asked, and runs it when
// that client's turn comes. A request whose client went away is cancelled (cancel()):
// taken out of the queue, or, being worked on, stopped at the next of those pieces; so
// is the one at work when the preparer is destroyed, so that framecld stops within the
// GPU work in flight.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "gpu/context.hpp"
#include "pipeline/gpu_turns.hpp"
#include "pipeline/session.hpp"
#include "pipeline/tuner.hpp"

namespace framecl::pipeline {

// A piece of a session's opening waiting for its turn on the GPU.
class PendingTurn {
public:
    PendingTurn(uint64_t ticket, uint64_t predicted_ns, uint32_t lane, EnqueueWork enqueue)
        : ticket_(ticket), predicted_ns_(predicted_ns), lane_(lane), enqueue_(std::move(enqueue))
    {
    }
    uint64_t ticket() const { return ticket_; } // the request's
    uint64_t predictedNs() const { return predicted_ns_; } // 0: none
    uint32_t lane() const { return lane_; }

    // On the loop's thread, when its turn comes: enqueues it and hands the result to the
    // preparer's thread. None where the opening was cancelled first: nothing enqueued.
    std::optional<Result<cl::Event>> run();
    // On the preparer's thread: waits until run() has run, or until `cancelled` is set
    // (and wake() called) before it began.
    Result<cl::Event> await(const std::atomic<bool>& cancelled);
    // Makes await() look at `cancelled` again.
    void wake();

private:
    enum class State { Waiting, Running, Ran, Abandoned };
    const uint64_t ticket_;
    const uint64_t predicted_ns_;
    const uint32_t lane_;
    const EnqueueWork enqueue_;
    std::mutex mutex_;
    std::condition_variable changed_;
    State state_ = State::Waiting;
    std::optional<Result<cl::Event>> result_;
};

class SessionPreparer final : private GpuTurns {
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
    struct Taken {
        std::vector<Progress> progress;
        std::vector<Prepared> prepared;
        std::vector<std::shared_ptr<PendingTurn>> turns;
    };
    // Every step begun, every session opened (or refused) and every piece of GPU work
    // asking for its turn so far, each in order; clears fd().
    Taken take();

private:
    void run();
    // GpuTurns, on the preparer's thread: the piece goes to the loop and waits there.
    Result<cl::Event> enqueueInTurn(uint64_t predicted_ns, uint32_t lane, const EnqueueWork& enqueue) override;
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
    std::vector<std::shared_ptr<PendingTurn>> turns_; // not yet taken
    std::shared_ptr<PendingTurn> waiting_turn_; // the one the thread waits for; cancel() wakes it
    uint64_t working_on_ = 0;           // the ticket at work; 0: none
    std::atomic<bool> cancel_working_{false}; // SessionOptions::cancelled of the request at work
    bool stopping_ = false;
    std::thread thread_; // last: it starts once the members above exist
};

} // namespace framecl::pipeline
