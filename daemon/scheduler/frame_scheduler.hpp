#pragma once
// A frame's life on the GPU, from accepted to ended (docs/architecture.md,
// "Scheduling"). Every client's frames wait in the fair queue of its priority rank and
// go to the GPU a part at a time while the work that runs before theirs is predicted to
// end within the lead (feedLeadNs), so that another client's frame that comes waits
// for about that and one part. The pieces of GPU work of a session being opened
// (pipeline/gpu_turns.hpp) wait in their client's queue and take turns as frames do.
//
// Each frame ends exactly once — ran, failed, or dropped while waiting — and its end is
// handed to the owner (ipc::Server) by callback, which speaks to the client. After a
// frame fails on the GPU a probe tells a frame that failed alone from a lost device;
// lost, every frame ends Failed and the owner hears why (docs/architecture.md, "A
// failed frame and a lost GPU").
//
// Not thread-safe: everything runs on the service loop's thread, which watches
// completionFd() and calls onCompletions(), calls tick() at nextWakeNs(), and calls
// schedule() after either and after submitting.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "gpu/context.hpp"
#include "gpu/release_fences.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/client_frame.hpp"
#include "pipeline/session.hpp"
#include "pipeline/session_preparer.hpp"
#include "scheduler/completion_queue.hpp"
#include "scheduler/fair_queue.hpp"
#include "scheduler/perf_hint_switch.hpp"
#include "scheduler/work_ahead.hpp"

namespace framecl::scheduler {

// A frame accepted for the GPU: its session fits its buffers.
struct Frame {
    uint64_t client_id;
    uint32_t session_id; // the client's
    uint64_t sequence;   // the client's
    std::shared_ptr<pipeline::Session> session;
    std::shared_ptr<memory::ImportedBuffer> input;
    std::shared_ptr<memory::ImportedBuffer> output;
    uint64_t queued_ns;   // when its Submit came (CLOCK_MONOTONIC)
    uint64_t arrival;     // its place among every Submit the owner received, in order
    uint64_t deadline_ns; // by which it must start (CLOCK_MONOTONIC); 0: none
    // Its client's release fence signals when the last holder lets go, after the frame
    // ended (gpu/release_fences.hpp); null: none was asked for.
    std::shared_ptr<gpu::ReleaseGate> release_gate{};
    // The stages' parameters as its Submit left them (Session::changeParameters); null:
    // those of the session's frame before.
    std::shared_ptr<const pipeline::ParameterSet> parameters{};
};

enum class Outcome { Ran, Failed, Dropped };

// How a frame ended, handed to the owner once per frame.
struct FrameEnd {
    const Frame& frame;
    Outcome outcome;
    std::string error{}; // why, unless it ran
    uint64_t start_ns = 0; // its first part enqueued; 0: it never started
    uint64_t end_ns = 0;   // when it was seen to end
    uint64_t gpu_end_ns = 0, callback_ns = 0; // for a frame that ran: docs/protocol.md, Done
    uint64_t gpu_ns = 0; // its parts' time on the GPU
    std::vector<std::pair<std::string, uint64_t>> stages{}; // a frame that ran: each stage's GPU time
    // A frame that ran, for its dispatches' times (Session::dispatchSlices) during the
    // call; null otherwise.
    const pipeline::EnqueuedFrame* ran = nullptr;
};

struct SchedulerEvents {
    std::function<void(const FrameEnd&)> frame_ended;
    // The GPU is lost (the reason says why): every frame has ended Failed, and nothing
    // goes to the device any more.
    std::function<void(const std::string& reason)> gpu_lost;
};

class FrameScheduler {
public:
    FrameScheduler(const gpu::GpuContext& gpu, const config::GpuConfig& settings, SchedulerEvents events);
    // Waits for the frames still on the GPU: they read and write buffers the frames hold.
    ~FrameScheduler();
    FrameScheduler(const FrameScheduler&) = delete;
    FrameScheduler& operator=(const FrameScheduler&) = delete;

    // The lead and the perf hint as `settings` ask, from now on.
    void reconfigure(const config::GpuConfig& settings);

    // Readable when parts have ended on the GPU: then call onCompletions().
    int completionFd() const { return completions_.fd(); }
    // When tick() is due (CLOCK_MONOTONIC): a deadline, the feed, the perf hint's idle
    // switch; none when nothing is.
    std::optional<uint64_t> nextWakeNs() const;

    // A client, into the fair queue of priority rank `rank` (gpu::GpuContext::laneRank)
    // with its weight; a client known already moves there with its waiting frames.
    void placeClient(uint64_t client_id, uint32_t rank, uint32_t weight);
    // A client gone: its waiting frames go with no end handed over; its frames on the
    // GPU with parts still to go get no more, and end Failed once what they enqueued ran.
    void removeClient(uint64_t client_id);
    // A session closed: what is known of its frames' order goes, and its frames still
    // waiting or running keep none, so that a client opening and closing sessions
    // leaves nothing behind.
    void forgetSession(uint64_t client_id, uint32_t session_id);

    // Into its client's queue; started by schedule().
    void submit(Frame frame);
    // The frame or Submit of the session at `arrival` did not run (here, or refused
    // before it came): the session's next frame begins with its state zeroed (plugin.h,
    // framecl_state), unless one after it began already.
    void skipped(uint64_t client_id, uint32_t session_id, uint64_t arrival);
    // Ends the session's oldest frame still waiting, Dropped with `why`; false where none waits.
    bool dropOldest(uint64_t client_id, uint32_t session_id, const std::string& why);
    // A piece of the GPU work of a session the client asked for (pipeline/gpu_turns.hpp).
    void queueOpeningWork(uint64_t client_id, std::shared_ptr<pipeline::PendingTurn> work);

    // Feeds the GPU while the work ahead is within the lead, and ends the waiting frames
    // past their deadline.
    void schedule();
    // Parts seen to end: their frames end.
    void onCompletions();
    // At nextWakeNs(): the perf hint's idle switch (schedule() does the rest).
    void tick();

    // Frames the client has waiting, not started.
    size_t framesWaiting(uint64_t client_id) const;
    // Frames not yet ended, waiting or on the GPU, over every client.
    size_t framesLeft() const;
    // Why the GPU is lost; empty while it is not.
    const std::string& gpuLost() const { return gpu_lost_; }
    const char* perfHint() const { return perf_hint_.current(); }

private:
    // A frame, or a piece of a session's opening, waiting in its client's queue.
    struct Pending {
        uint64_t serial;
        Frame frame;
        // Its first part is on the GPU: it stays at the front of its client's queue, and
        // in in_flight_, until its last part is.
        bool started = false;
        // The frame before it (in the order Submits arrived) did not run: the session's
        // state is zeroed before its first part.
        bool reset_state = false;
        // Not a frame: a piece of the GPU work of a session being opened, which runs
        // when the client's turn comes.
        std::shared_ptr<pipeline::PendingTurn> opening_work{};
    };
    struct InFlight {
        Pending pending;
        // Its commands so far: its parts, and the copies and hand-offs around them.
        pipeline::ClientFrame commands;
        uint64_t start_ns;         // its first part enqueued
        uint64_t last_part_ns = 0; // its last part enqueued, or its end enqueued when abandoned
        uint64_t gpu_ns = 0;       // its parts' measured GPU time, summed as they end
        // Why its parts stopped going to the GPU (one failed to enqueue): it ends Failed
        // once what it enqueued has run.
        std::string failure;

        const pipeline::EnqueuedFrame& parts() const { return commands.frame; }
    };
    // The order of one session's frames, for its state (skipped()).
    struct SessionOrder {
        // A frame at this place did not run and no frame after it has been submitted
        // yet: the next one submitted begins with the state zeroed. One place is
        // enough: every later Submit arrived after it.
        std::optional<uint64_t> reset_after;
        uint64_t last_begun = 0; // the place of the newest frame that began
    };
    // WorkAhead::Part::part of an abandoned frame's end, and of a piece of a session's
    // opening (no frame).
    static constexpr size_t abandoned_part = SIZE_MAX;
    static constexpr size_t opening_part = SIZE_MAX - 1;

    FairQueue<Pending>& fairQueueOf(uint64_t client_id);
    const FairQueue<Pending>& fairQueueOf(uint64_t client_id) const;
    // The predicted time of the next part of the client's front frame; 0: unknown.
    uint64_t nextPartNs(uint64_t client_id);
    // Puts the next part of the client's front frame on the GPU, starting the frame
    // first if it is new; pops it from the fair queue once it is all there.
    void enqueueNextPart(uint64_t client_id);
    // The same where the front is a piece of a session's opening: its thread enqueues it now.
    void runOpeningWork(uint64_t client_id);
    // Watches `event` on lane `lane`, the end of part `part` of `serial`'s frame.
    void watchPart(uint64_t serial, uint64_t client_id, size_t part, uint32_t lane, const cl::Event& event,
                   uint64_t predicted_ns, uint64_t enqueued_ns, bool last);
    // A started frame whose next part will not go: ends Failed with `error` once what it
    // enqueued has run (at once if nothing was).
    void abandonFrame(InFlight& flight, const std::string& error);
    void expireWaitingFrames(uint64_t now_ns);
    // The end of a frame that never reached the GPU.
    void endWaitingFrame(const Pending& pending, Outcome outcome, const std::string& error);
    void completePart(const Completion& completion);
    void completeFrame(InFlight flight, cl_int status, uint64_t callback_ns);
    // After a frame failed on the GPU (gpu_loss.cpp).
    void checkGpuAfterFailure();
    void failEveryFrame(const std::string& reason);

    const gpu::GpuContext& gpu_;
    SchedulerEvents events_;
    CompletionQueue completions_;
    // One per priority rank (gpu::GpuContext::laneRank), each client in the one of its
    // lane: a rank's clients go to the GPU only while no client of a rank before it
    // may, as the GPU runs a higher-priority queue's work first.
    std::vector<FairQueue<Pending>> fair_queues_;
    std::map<uint64_t, InFlight> in_flight_; // started, by serial
    WorkAhead work_ahead_;                   // the parts on the GPU, as predicted
    std::map<std::pair<uint64_t, uint32_t>, SessionOrder> orders_; // by client and session
    uint64_t feed_at_ns_ = 0; // when the work ahead will have shrunk under the lead; 0: no frame waits
    bool gpu_failed_ = false; // a frame failed on the GPU since the last probe
    std::chrono::steady_clock::time_point gpu_probe_passed_{}; // when a probe last found the device working
    std::string gpu_lost_;
    uint64_t next_serial_ = 1;
    PerfHintSwitch perf_hint_;
};

} // namespace framecl::scheduler
