#include "scheduler/frame_scheduler.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "gpu/cl_error.hpp"

namespace framecl::scheduler {
namespace {

// The fair queue's credit per turn at weight 1. Small against any frame: a client in
// debt waits while others run, and one with credit left starts at most one more frame
// before a newly arrived client's turn, whatever the frames cost.
constexpr uint64_t fair_queue_quantum_ns = 1'000'000;
// Fair queues, one per priority rank: high, normal, low.
constexpr size_t priority_ranks = 3;

// The priority rank of each of the GPU's lanes.
std::vector<uint32_t> laneRanks(const gpu::GpuContext& gpu)
{
    std::vector<uint32_t> ranks;
    for (uint32_t lane = 0; lane < gpu.lanes(); ++lane)
        ranks.push_back(gpu.laneRank(lane));
    return ranks;
}

// When a frame's last command ended, on CLOCK_MONOTONIC: `enqueued_ns`, taken just before
// the frame was enqueued, plus that command's profiled span from QUEUED to END, so that
// no device clock has to be mapped onto the host's. Within the few microseconds the
// enqueue takes; 0 where the event carries no profiling or `gpu` is timed by the host's
// clock.
uint64_t gpuEndNs(const gpu::GpuContext& gpu, const cl::Event& last, uint64_t enqueued_ns)
{
    cl_ulong queued = 0, end = 0;
    if (!gpu.clock().device() ||
        clGetEventProfilingInfo(last(), CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr) != CL_SUCCESS ||
        clGetEventProfilingInfo(last(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) != CL_SUCCESS ||
        end < queued)
        return 0;
    return enqueued_ns + (end - queued);
}

} // namespace

FrameScheduler::FrameScheduler(const gpu::GpuContext& gpu, const config::GpuConfig& settings, SchedulerEvents events)
    : gpu_(gpu), events_(std::move(events)), completions_(gpu.lanes()),
      fair_queues_(priority_ranks, FairQueue<Pending>(fair_queue_quantum_ns)),
      work_ahead_(laneRanks(gpu), feedLeadNs(settings.kernel_budget_ms)), perf_hint_(gpu, settings)
{
}

FrameScheduler::~FrameScheduler()
{
    if (in_flight_.empty())
        return;
    log::get("scheduler")->warn("waiting for {} frames still on the GPU before stopping", in_flight_.size());
    if (const cl_int err = gpu_.finishAll(); err != CL_SUCCESS)
        log::get("scheduler")->error("{}", gpu::clFailure("clFinish", err, "frames in flight at stop"));
}

void FrameScheduler::reconfigure(const config::GpuConfig& settings)
{
    work_ahead_.setLeadNs(feedLeadNs(settings.kernel_budget_ms));
    perf_hint_.reconfigure(settings);
}

std::optional<uint64_t> FrameScheduler::nextWakeNs() const
{
    std::optional<uint64_t> earliest;
    const auto consider = [&](uint64_t at) { earliest = std::min(earliest.value_or(at), at); };
    for (const FairQueue<Pending>& queue : fair_queues_)
        queue.forEachWaiting([&](const Pending& pending) {
            if (pending.frame.deadline_ns && !pending.started)
                consider(pending.frame.deadline_ns);
        });
    if (const auto idle = perf_hint_.idleDeadline(); idle && in_flight_.empty())
        consider(monotonicNs(*idle));
    if (feed_at_ns_)
        consider(feed_at_ns_);
    return earliest;
}

void FrameScheduler::placeClient(uint64_t client_id, uint32_t rank, uint32_t weight)
{
    std::deque<Pending> waiting;
    for (uint32_t other = 0; other < fair_queues_.size(); ++other)
        if (other != rank && fair_queues_[other].waiting(client_id))
            waiting = fair_queues_[other].removeClient(client_id);
    fair_queues_.at(rank).addClient(client_id, weight);
    for (Pending& pending : waiting)
        fair_queues_[rank].push(client_id, std::move(pending));
}

void FrameScheduler::removeClient(uint64_t client_id)
{
    fairQueueOf(client_id).removeClient(client_id); // its waiting frames, and their buffers, go now
    std::erase_if(orders_, [&](const auto& order) { return order.first.first == client_id; });
    // A frame with parts on the GPU and parts still to go: the rest will not.
    std::vector<uint64_t> unfinished;
    for (const auto& [serial, flight] : in_flight_)
        if (flight.pending.frame.client_id == client_id && !flight.parts().allEnqueued() && flight.failure.empty())
            unfinished.push_back(serial);
    for (uint64_t serial : unfinished)
        abandonFrame(in_flight_.at(serial), "its client went away");
}

void FrameScheduler::forgetSession(uint64_t client_id, uint32_t session_id)
{
    orders_.erase({client_id, session_id});
}

void FrameScheduler::submit(Frame frame)
{
    Pending pending{next_serial_++, std::move(frame)};
    // A session's order is known from its first frame on: before it, its state is as
    // opened, and a Submit refused then leaves nothing to zero.
    SessionOrder& order = orders_[{pending.frame.client_id, pending.frame.session_id}];
    if (order.reset_after && pending.frame.arrival > *order.reset_after) {
        pending.reset_state = true;
        order.reset_after.reset();
    }
    const uint64_t client_id = pending.frame.client_id;
    fairQueueOf(client_id).push(client_id, std::move(pending));
}

bool FrameScheduler::dropOldest(uint64_t client_id, uint32_t session_id, const std::string& why)
{
    std::deque<Pending>* waiting = fairQueueOf(client_id).waiting(client_id);
    if (!waiting)
        return false;
    const auto oldest = std::find_if(waiting->begin(), waiting->end(), [&](const Pending& p) {
        return !p.opening_work && p.frame.session_id == session_id && !p.started;
    });
    if (oldest == waiting->end())
        return false;
    const Pending dropped = std::move(*oldest);
    waiting->erase(oldest);
    endWaitingFrame(dropped, Outcome::Dropped, why);
    return true;
}

void FrameScheduler::queueOpeningWork(uint64_t client_id, std::shared_ptr<pipeline::PendingTurn> work)
{
    Pending queued{next_serial_++, Frame{client_id, 0, 0, nullptr, nullptr, nullptr, monotonicNs(), 0, 0}};
    queued.opening_work = std::move(work);
    fairQueueOf(client_id).push(client_id, std::move(queued));
}

void FrameScheduler::schedule()
{
    if (gpu_failed_)
        checkGpuAfterFailure();
    if (!gpu_lost_.empty())
        return; // every frame has ended
    const uint64_t now = monotonicNs();
    expireWaitingFrames(now);
    feed_at_ns_ = 0;
    for (bool fed_one = true; fed_one;) {
        // The ranks in order: a rank's client goes while the work that runs before its
        // own (on its lanes and those of higher priority) is predicted to end within the
        // lead.
        fed_one = false;
        for (uint32_t rank = 0; rank < fair_queues_.size() && !fed_one; ++rank) {
            FairQueue<Pending>& fair_queue = fair_queues_[rank];
            if (fair_queue.waitingCount() == 0)
                continue;
            const uint64_t ahead = work_ahead_.aheadNs(now, rank);
            if (ahead >= work_ahead_.leadNs()) {
                // Fed enough, for the ranks after it too: look again when the work ahead
                // will have shrunk under the lead (or when a part is seen to end,
                // whichever comes first).
                feed_at_ns_ = now + (ahead - work_ahead_.leadNs()) + 1;
                break;
            }
            // Behind running work, only a part short enough to queue there (the others
            // go when the GPU is seen to be done).
            const bool busy = work_ahead_.busy(rank);
            const std::optional<uint64_t> next = fair_queue.choose([&](uint64_t client) {
                const uint64_t predicted = busy ? nextPartNs(client) : 0;
                return !busy || (predicted > 0 && predicted <= prefetch_limit_ns);
            });
            if (next) {
                enqueueNextPart(*next);
                fed_one = true;
            }
        }
        // A part that failed to enqueue: the probe first, before anything more goes to
        // a device that may be lost.
        if (gpu_failed_)
            return schedule();
    }
}

uint64_t FrameScheduler::nextPartNs(uint64_t client_id)
{
    const Pending& front = fairQueueOf(client_id).front(client_id);
    if (front.opening_work)
        return front.opening_work->predictedNs();
    if (!front.started)
        return front.frame.session->predictedFirstPartNs();
    const InFlight& flight = in_flight_.at(front.serial);
    return front.frame.session->predictedNs(flight.parts(), flight.parts().parts_enqueued);
}

void FrameScheduler::enqueueNextPart(uint64_t client_id)
{
    FairQueue<Pending>& fair_queue = fairQueueOf(client_id);
    Pending& front = fair_queue.front(client_id);
    if (front.opening_work)
        return runOpeningWork(client_id);
    const Frame& waiting = front.frame;
    if (!front.started) {
        auto begun =
            pipeline::beginClientFrame(*waiting.session, *waiting.input, *waiting.output, waiting.parameters);
        if (!begun) {
            const Pending failed = std::move(front);
            fair_queue.pop(client_id);
            endWaitingFrame(failed, Outcome::Failed, begun.error().message);
            return;
        }
        front.started = true;
        if (front.reset_state)
            waiting.session->resetState(); // before this frame's first part, enqueued below
        // Closed since (forgetSession), its order is not kept again.
        if (auto order = orders_.find({client_id, waiting.session_id}); order != orders_.end())
            order->second.last_begun = waiting.arrival;
        waiting.input->beginAccess(memory::ImportedBuffer::Access::Read);
        waiting.output->beginAccess(memory::ImportedBuffer::Access::Write);
        in_flight_.emplace(front.serial, InFlight{front, std::move(*begun), monotonicNs(), 0, 0, {}});
        perf_hint_.workStarted(std::chrono::steady_clock::now());
    }
    InFlight& flight = in_flight_.at(front.serial);
    const Frame& started = flight.pending.frame;
    const size_t part = flight.parts().parts_enqueued;
    const uint64_t predicted = started.session->predictedNs(flight.parts(), part);
    const uint64_t enqueued_ns = monotonicNs();
    const uint32_t lane = work_ahead_.laneFor(started.session->lanes(), enqueued_ns);
    auto event =
        pipeline::enqueueClientPart(*started.session, *started.input, *started.output, flight.commands, lane);
    const bool last = flight.parts().allEnqueued();
    if (!event || last)
        fair_queue.pop(client_id); // `front` goes with it; `flight` stays
    if (!event) {
        gpu_failed_ = true;
        abandonFrame(flight, event.error().message);
        return;
    }
    if (last)
        flight.last_part_ns = enqueued_ns;
    fair_queue.charge(client_id, int64_t(predicted));
    watchPart(flight.pending.serial, client_id, part, lane, *event, predicted, enqueued_ns, last);
}

void FrameScheduler::runOpeningWork(uint64_t client_id)
{
    FairQueue<Pending>& fair_queue = fairQueueOf(client_id);
    const Pending work = std::move(fair_queue.front(client_id));
    fair_queue.pop(client_id);
    const uint64_t enqueued_ns = monotonicNs();
    const auto event = work.opening_work->run();
    // Cancelled meanwhile, or refused by the runtime (a work-group size the kernel cannot
    // take, for a tuning candidate): the preparer's thread hears why; the device is fine.
    if (!event || !*event)
        return;
    fair_queue.charge(client_id, int64_t(work.opening_work->predictedNs()));
    perf_hint_.workStarted(std::chrono::steady_clock::now());
    watchPart(work.serial, client_id, opening_part, work.opening_work->lane(), **event,
              work.opening_work->predictedNs(), enqueued_ns, true);
}

void FrameScheduler::watchPart(uint64_t serial, uint64_t client_id, size_t part, uint32_t lane,
                               const cl::Event& event, uint64_t predicted_ns, uint64_t enqueued_ns, bool last)
{
    const uint64_t part_serial = work_ahead_.add({serial, client_id, part, lane, predicted_ns, enqueued_ns, last});
    completions_.notifyOnCompletion(event, part_serial, lane);
    // Guide §5.7: flush so the GPU starts now rather than when the queue fills.
    gpu_.lane(lane).flush();
}

void FrameScheduler::abandonFrame(InFlight& flight, const std::string& error)
{
    flight.failure = error;
    const uint64_t serial = flight.pending.serial;
    const Frame& started = flight.pending.frame;
    const uint64_t enqueued_ns = monotonicNs();
    auto end = pipeline::abandonClientFrame(*started.session, *started.input, *started.output, flight.commands);
    if (end && *end) {
        flight.last_part_ns = enqueued_ns;
        watchPart(serial, started.client_id, abandoned_part, flight.parts().last_lane, **end, 0, enqueued_ns, true);
        return;
    }
    if (!end) {
        // Nothing can be waited for: the GPU is waited for whole.
        log::get("scheduler")->error("ending a failed frame: {}", end.error().message);
        if (const cl_int err = gpu_.finishAll(); err != CL_SUCCESS)
            log::get("scheduler")->error("{}", gpu::clFailure("clFinish", err, "a failed frame"));
    }
    // Nothing of it is still running: it ends now. Parts of it still watched end it
    // again; in_flight_ no longer knows it.
    auto node = in_flight_.extract(serial);
    completeFrame(std::move(node.mapped()), CL_COMPLETE, monotonicNs());
}

void FrameScheduler::expireWaitingFrames(uint64_t now_ns)
{
    // A started frame is on its way: only its parts are still to go to the GPU.
    const auto past = [&](const Pending& pending) {
        return !pending.started && pending.frame.deadline_ns && pending.frame.deadline_ns <= now_ns;
    };
    std::vector<Pending> expired;
    for (FairQueue<Pending>& queue : fair_queues_)
        queue.extractWaiting(past, expired);
    for (const Pending& pending : expired) {
        const uint64_t deadline_us = (pending.frame.deadline_ns - pending.frame.queued_ns) / 1000;
        endWaitingFrame(pending, Outcome::Dropped, fmt::format("not started within its deadline of {} us", deadline_us));
    }
}

void FrameScheduler::skipped(uint64_t client_id, uint32_t session_id, uint64_t arrival)
{
    const auto found = orders_.find({client_id, session_id});
    if (found == orders_.end())
        return; // no frame of it submitted yet, or closed: no state to zero
    SessionOrder& order = found->second;
    // A frame after it that began already read the state as it was: too late for it,
    // and the frames after that one have a frame before them.
    if (order.last_begun > arrival)
        return;
    // The client's queue holds its frames in the order they arrived (held Submits are
    // submitted before newer ones): the first of the session's after `arrival` is the next.
    if (std::deque<Pending>* waiting = fairQueueOf(client_id).waiting(client_id))
        for (Pending& pending : *waiting)
            if (!pending.opening_work && pending.frame.session_id == session_id && pending.frame.arrival > arrival &&
                !pending.started) {
                pending.reset_state = true;
                return;
            }
    order.reset_after = order.reset_after ? std::min(*order.reset_after, arrival) : arrival;
}

void FrameScheduler::endWaitingFrame(const Pending& pending, Outcome outcome, const std::string& error)
{
    skipped(pending.frame.client_id, pending.frame.session_id, pending.frame.arrival);
    events_.frame_ended({.frame = pending.frame, .outcome = outcome, .error = error, .end_ns = monotonicNs()});
}

void FrameScheduler::onCompletions()
{
    for (const Completion& completion : completions_.take())
        completePart(completion);
}

void FrameScheduler::tick()
{
    perf_hint_.tick(std::chrono::steady_clock::now());
}

void FrameScheduler::completePart(const Completion& completion)
{
    // Each lane's parts end in the order they were enqueued there, but the lanes' in any
    // order. A frame's end waited for all its parts: those on another lane whose
    // completion is not seen yet have ended too, and count before it.
    const WorkAhead::Part* found = work_ahead_.find(completion.frame);
    if (!found)
        return;
    if (found->last)
        for (const uint64_t serial : work_ahead_.otherParts(found->frame, completion.frame))
            completePart({serial, completion.execution_status, completion.callback_ns});
    const auto seen = work_ahead_.complete(completion.frame, completion.callback_ns);
    if (!seen)
        return;
    const WorkAhead::Part& part = seen->part;
    if (part.part == opening_part) {
        // Its thread waits for it too, and reads its profiled time; here it is charged
        // by the time it held the GPU as the host saw it.
        fairQueueOf(part.client_id).charge(part.client_id, int64_t(seen->held_ns) - int64_t(part.predicted_ns));
        if (completion.execution_status != CL_COMPLETE)
            gpu_failed_ = true;
        if (work_ahead_.empty())
            perf_hint_.workEnded(std::chrono::steady_clock::now());
        return;
    }
    auto it = in_flight_.find(part.frame);
    if (it == in_flight_.end())
        return;
    InFlight& flight = it->second;
    if (part.part != abandoned_part) {
        // What it cost, profiled, or (without profiling) its time on the GPU's queue
        // from when the GPU could take it; the fair queue charged the prediction.
        uint64_t gpu_ns = flight.pending.frame.session->partNs(flight.parts(), part.part);
        if (gpu_ns == 0)
            gpu_ns = seen->held_ns;
        flight.gpu_ns += gpu_ns;
        fairQueueOf(part.client_id).charge(part.client_id, int64_t(gpu_ns) - int64_t(part.predicted_ns));
    }
    // A part that failed fails the frame, which still ends with its last part: the
    // parts behind it use its buffers until then.
    if (completion.execution_status != CL_COMPLETE) {
        gpu_failed_ = true;
        if (flight.failure.empty())
            flight.failure = fmt::format("the GPU failed the frame: {}", gpu::clErrorName(completion.execution_status));
    }
    if (!part.last)
        return;
    InFlight ended = std::move(flight);
    in_flight_.erase(it);
    completeFrame(std::move(ended), completion.execution_status, completion.callback_ns);
}

void FrameScheduler::completeFrame(InFlight flight, cl_int status, uint64_t callback_ns)
{
    const Frame& ended = flight.pending.frame;
    ended.input->endAccess(memory::ImportedBuffer::Access::Read);
    ended.output->endAccess(memory::ImportedBuffer::Access::Write);
    if (status != CL_COMPLETE && flight.failure.empty())
        flight.failure = fmt::format("the GPU failed the frame: {}", gpu::clErrorName(status));
    const bool ran = flight.failure.empty();
    if (!ran)
        skipped(ended.client_id, ended.session_id, ended.arrival);
    // The end first: what follows only keeps the books, and the client waits.
    events_.frame_ended({.frame = ended,
                         .outcome = ran ? Outcome::Ran : Outcome::Failed,
                         .error = flight.failure,
                         .start_ns = flight.start_ns,
                         .end_ns = monotonicNs(),
                         .gpu_end_ns =
                             flight.commands.done() ? gpuEndNs(gpu_, flight.commands.done, flight.last_part_ns) : 0,
                         .callback_ns = callback_ns,
                         .gpu_ns = flight.gpu_ns,
                         .stages = ran ? ended.session->stageTimes(flight.parts())
                                       : std::vector<std::pair<std::string, uint64_t>>{},
                         .ran = ran ? &flight.parts() : nullptr});
    if (ran)
        ended.session->frameCompleted(flight.parts(), flight.gpu_ns);
    if (work_ahead_.empty())
        perf_hint_.workEnded(std::chrono::steady_clock::now());
}

size_t FrameScheduler::framesWaiting(uint64_t client_id) const
{
    const std::deque<Pending>* waiting = fairQueueOf(client_id).waiting(client_id);
    return waiting ? size_t(std::count_if(waiting->begin(), waiting->end(),
                                          [](const Pending& p) { return !p.started && !p.opening_work; }))
                   : 0;
}

size_t FrameScheduler::framesLeft() const
{
    size_t left = in_flight_.size();
    for (const FairQueue<Pending>& queue : fair_queues_)
        queue.forEachWaiting([&](const Pending& p) { left += !p.started && !p.opening_work; });
    return left;
}

FairQueue<FrameScheduler::Pending>& FrameScheduler::fairQueueOf(uint64_t client_id)
{
    for (auto& queue : fair_queues_)
        if (queue.waiting(client_id))
            return queue;
    return fair_queues_.front(); // unknown: where placeClient would have put it by default
}

const FairQueue<FrameScheduler::Pending>& FrameScheduler::fairQueueOf(uint64_t client_id) const
{
    return const_cast<FrameScheduler*>(this)->fairQueueOf(client_id);
}

} // namespace framecl::scheduler
