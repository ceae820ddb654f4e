// Frames: from Submit through the fair queues to the GPU, and from completion to Done.
// Exactly one Done per Submit: refused at once, dropped while waiting, failed, or
// completed. Everything is enqueued from this thread (the service loop's), the session
// preparer's pieces of GPU work included: they wait in their client's queue as its
// frames do (pipeline/gpu_turns.hpp).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

#include <sys/socket.h>
#include <sys/timerfd.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "envelope.hpp"
#include "gpu/cl_error.hpp"
#include "ipc/server.hpp"
#include "pipeline/client_frame.hpp"

namespace framecl::ipc {
namespace {

// `framecl trace` windows recording at once, over all clients.
constexpr size_t max_open_traces = 4;

// steady_clock is CLOCK_MONOTONIC on Linux: the timer and the frames share one clock.
uint64_t monotonicNs(std::chrono::steady_clock::time_point at)
{
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
}

// When a frame's last command ended, on CLOCK_MONOTONIC: `enqueued_ns`, taken just before
// the frame was enqueued, plus that command's profiled span from QUEUED to END, so that
// no device clock has to be mapped onto the host's. Within the few microseconds the
// enqueue takes; 0 where the event carries no profiling.
uint64_t gpuEndNs(const cl::Event& last, uint64_t enqueued_ns)
{
    cl_ulong queued = 0, end = 0;
    if (clGetEventProfilingInfo(last(), CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr) != CL_SUCCESS ||
        clGetEventProfilingInfo(last(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) != CL_SUCCESS ||
        end < queued)
        return 0;
    return enqueued_ns + (end - queued);
}

} // namespace

void Server::sendDone(ClientState& client, uint32_t session, uint64_t sequence, const DoneFields& done)
{
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<wire::StageTime>> stages;
    for (const auto& [name, ns] : done.stages)
        stages.push_back(wire::CreateStageTimeDirect(builder, name.c_str(), ns));
    auto message = wire::CreateDoneDirect(builder, session, sequence, done.status,
                                          done.error.empty() ? nullptr : done.error.c_str(), done.queued_ns,
                                          done.start_ns, done.end_ns, &stages, done.gpu_end_ns, done.callback_ns);
    const auto bytes = protocol::finishEnvelope(builder, message);
    // On the buffer socket, where the Submit came: one wake-up of the client. Only a
    // bound client has frames, so the connection is there. Never waits: a client whose
    // socket holds hundreds of unread Dones has stopped reading, and loses the next.
    if (::send(client.buffer_connection.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
        return;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (client.dones_unsent++ == 0)
            log::get("ipc")->warn("client '{}' does not read its buffer socket: its Dones are dropped", client.name);
    } else {
        // The client is gone: the loop sees its connection close and drops it.
        log::get("ipc")->debug("client '{}': Done not sent: {}", client.name, std::strerror(errno));
    }
}

void Server::onSubmit(ClientState& client, const wire::Submit& submit)
{
    const HeldSubmit fields{submit.session(), submit.input_buffer(), submit.output_buffer(), submit.sequence(),
                            monotonicNs(), next_arrival_++};
    auto frame = acceptFrame(client, fields);
    if (!frame) {
        sendDone(client, fields.session, fields.sequence,
                 {frame.error().status, frame.error().error, fields.queued_ns, 0, monotonicNs(), {}});
        return;
    }
    SessionState& state = client.sessions.at(fields.session);
    // Submits held under `block` go first: a newer Submit that found a free slot must
    // not overtake them.
    if (client.in_flight >= config_.limits.max_inflight_per_client || !client.held.empty()) {
        applyBackpressure(client, state, fields, std::move(*frame));
        schedule();
        return;
    }
    queueFrame(client, state, std::move(*frame));
    schedule();
}

tl::expected<Server::PendingFrame, Server::Refusal> Server::acceptFrame(ClientState& client, const HeldSubmit& submit)
{
    auto session_it = client.sessions.find(submit.session);
    if (session_it == client.sessions.end())
        return tl::unexpected(Refusal{wire::FrameStatus::Failed, fmt::format("no session {}", submit.session)});
    SessionState& state = session_it->second;
    // Every frame of a session that does not run to its end leaves the next with no
    // frame before it (plugin.h, framecl_state).
    const auto refuse = [&](const std::string& error) {
        ++state.counters.failed;
        frameSkipped(client.token, submit.session, submit.arrival);
        return tl::unexpected(Refusal{wire::FrameStatus::Failed, error});
    };
    auto input_it = client.buffers.find(submit.input_buffer);
    auto output_it = client.buffers.find(submit.output_buffer);
    if (input_it == client.buffers.end() || output_it == client.buffers.end())
        return refuse(fmt::format("no buffer {}", input_it == client.buffers.end() ? submit.input_buffer
                                                                                   : submit.output_buffer));
    if (input_it->second == output_it->second)
        return refuse("the input and output buffer must differ");
    auto fits = state.session->checkInput(input_it->second->layout());
    if (fits)
        fits = state.session->checkOutput(output_it->second->layout());
    if (!fits)
        return refuse(fits.error().message);
    if (!gpu_lost_.empty())
        return refuse(gpu_lost_);
    PendingFrame frame{next_frame_serial_++, client.token, submit.session, submit.sequence, state.session,
                       input_it->second, output_it->second, submit.queued_ns, submit.arrival,
                       state.deadline_ns ? submit.queued_ns + state.deadline_ns : 0};
    if (state.reset_after && submit.arrival > *state.reset_after) {
        frame.reset_state = true;
        state.reset_after.reset();
    }
    return frame;
}

void Server::applyBackpressure(ClientState& client, SessionState& state, const HeldSubmit& submit, PendingFrame frame)
{
    const uint32_t limit = config_.limits.max_inflight_per_client;
    const auto busy = [&](const std::string& why) {
        ++state.counters.busy;
        frameSkipped(client.token, submit.session, submit.arrival);
        sendDone(client, submit.session, submit.sequence,
                 {wire::FrameStatus::Busy, why, submit.queued_ns, 0, monotonicNs(), {}});
    };
    switch (state.backpressure) {
    case wire::Backpressure::Reject:
        busy(fmt::format("{} frames in flight already (limits.max_inflight_per_client)", client.in_flight));
        return;
    case wire::Backpressure::Block:
        // The frame's buffers are looked up again when it is taken: the client may
        // release them meanwhile.
        if (client.held.size() >= limit) {
            busy(fmt::format("{} frames in flight and {} Submits waiting already (limits.max_inflight_per_client, "
                             "backpressure block)",
                             client.in_flight, client.held.size()));
            return;
        }
        client.held.push_back(submit);
        return;
    case wire::Backpressure::DropOldest:
        break;
    }
    std::deque<PendingFrame>* waiting = fairQueueOf(client.id).waiting(client.id);
    auto oldest = waiting ? std::find_if(waiting->begin(), waiting->end(),
                                         [&](const PendingFrame& f) { return f.session_id == submit.session && !f.started; })
                          : std::deque<PendingFrame>::iterator{};
    if (!waiting || oldest == waiting->end()) {
        busy(fmt::format("{} frames in flight already and none of session {} waits to be dropped", client.in_flight,
                         submit.session));
        return;
    }
    const PendingFrame dropped = std::move(*oldest);
    waiting->erase(oldest);
    endWaitingFrame(dropped, wire::FrameStatus::Dropped, "replaced by a newer frame (backpressure drop_oldest)");
    queueFrame(client, state, std::move(frame));
    schedule();
}

void Server::queueFrame(ClientState& client, SessionState& state, PendingFrame frame)
{
    ++client.in_flight;
    ++state.in_flight;
    fairQueueOf(client.id).push(client.id, std::move(frame));
}

void Server::admitHeld(ClientState& client)
{
    while (!client.held.empty() && client.in_flight < config_.limits.max_inflight_per_client) {
        const HeldSubmit submit = client.held.front();
        client.held.pop_front();
        auto frame = acceptFrame(client, submit);
        if (!frame) {
            sendDone(client, submit.session, submit.sequence,
                     {frame.error().status, frame.error().error, submit.queued_ns, 0, monotonicNs(), {}});
            continue;
        }
        queueFrame(client, client.sessions.at(submit.session), std::move(*frame));
    }
}

void Server::schedule()
{
    if (gpu_failed_)
        checkGpuAfterFailure();
    if (!gpu_lost_.empty())
        return; // every frame has ended; the loop is stopping
    const uint64_t now = monotonicNs();
    expireWaitingFrames(now);
    feed_at_ns_ = 0;
    for (bool fed_one = true; fed_one;) {
        // Whatever freed a slot — a frame done, dropped, expired, or failed to start —
        // the client's held Submits take it first, in the order they came.
        for (auto& [token, client] : clients_)
            admitHeld(client);
        // The ranks in order: a rank's client goes while the work that runs before its
        // own (on its lanes and those of higher priority) is predicted to end within the
        // lead.
        fed_one = false;
        for (uint32_t rank = 0; rank < fair_queues_.size() && !fed_one; ++rank) {
            scheduler::FairQueue<PendingFrame>& fair_queue = fair_queues_[rank];
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
                return !busy || (predicted > 0 && predicted <= scheduler::prefetch_limit_ns);
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
    armSchedulerTimer();
}

uint64_t Server::nextPartNs(uint64_t client_id)
{
    const PendingFrame& front = fairQueueOf(client_id).front(client_id);
    if (front.opening_work)
        return front.opening_work->predictedNs();
    if (!front.started)
        return front.session->predictedFirstPartNs();
    const InFlightFrame& frame = in_flight_.at(front.serial);
    return front.session->predictedNs(frame.frame.frame, frame.frame.frame.parts_enqueued);
}

void Server::enqueueNextPart(uint64_t client_id)
{
    scheduler::FairQueue<PendingFrame>& fair_queue = fairQueueOf(client_id);
    PendingFrame& front = fair_queue.front(client_id);
    if (front.opening_work)
        return runOpeningWork(client_id);
    if (!front.started) {
        pipeline::ClientFrame begun;
        if (auto frame = pipeline::beginClientFrame(*front.session, *front.input, *front.output); frame)
            begun = std::move(*frame);
        else {
            const PendingFrame failed = std::move(front);
            fair_queue.pop(client_id);
            endWaitingFrame(failed, wire::FrameStatus::Failed, frame.error().message);
            return;
        }
        front.started = true;
        if (front.reset_state)
            front.session->resetState(); // before this frame's first part, enqueued below
        if (ClientState* client = clientByToken(front.token))
            if (auto state = client->sessions.find(front.session_id); state != client->sessions.end())
                state->second.last_begun = front.arrival;
        front.input->beginAccess(memory::ImportedBuffer::Access::Read);
        front.output->beginAccess(memory::ImportedBuffer::Access::Write);
        in_flight_.emplace(front.serial, InFlightFrame{front, client_id, std::move(begun), monotonicNs(), 0, 0, {}});
        perf_hint_.workStarted(std::chrono::steady_clock::now());
    }
    InFlightFrame& frame = in_flight_.at(front.serial);
    const PendingFrame& pending = frame.pending;
    const size_t part = frame.frame.frame.parts_enqueued;
    const uint64_t predicted = pending.session->predictedNs(frame.frame.frame, part);
    const uint64_t enqueued_ns = monotonicNs();
    const uint32_t lane = work_ahead_.laneFor(pending.session->lanes(), enqueued_ns);
    auto event = pipeline::enqueueClientPart(*pending.session, *pending.input, *pending.output, frame.frame, lane);
    const bool last = frame.frame.frame.allEnqueued();
    if (!event || last)
        fair_queue.pop(client_id); // `front` and `pending` go with it; `frame` stays
    if (!event) {
        gpu_failed_ = true;
        abandonFrame(frame, event.error().message);
        return;
    }
    if (last)
        frame.last_part_ns = enqueued_ns;
    fair_queue.charge(client_id, int64_t(predicted));
    watchPart(frame.pending.serial, client_id, part, lane, *event, predicted, enqueued_ns, last);
}

void Server::runOpeningWork(uint64_t client_id)
{
    scheduler::FairQueue<PendingFrame>& fair_queue = fairQueueOf(client_id);
    const PendingFrame work = std::move(fair_queue.front(client_id));
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

void Server::watchPart(uint64_t serial, uint64_t client_id, size_t part, uint32_t lane, const cl::Event& event,
                       uint64_t predicted_ns, uint64_t enqueued_ns, bool last)
{
    const uint64_t part_serial = work_ahead_.add({serial, client_id, part, lane, predicted_ns, enqueued_ns, last});
    completions_.notifyOnCompletion(event, part_serial, lane);
    // Guide §5.7: flush so the GPU starts now rather than when the queue fills.
    gpu_.lane(lane).flush();
}

void Server::abandonFrame(InFlightFrame& frame, const std::string& error)
{
    frame.failure = error;
    const uint64_t serial = frame.pending.serial;
    const uint64_t enqueued_ns = monotonicNs();
    auto end = pipeline::abandonClientFrame(*frame.pending.session, *frame.pending.input, *frame.pending.output,
                                            frame.frame);
    if (end && *end) {
        frame.last_part_ns = enqueued_ns;
        watchPart(serial, frame.client_id, abandoned_part, frame.frame.frame.last_lane, **end, 0, enqueued_ns, true);
        return;
    }
    if (!end)
        log::get("ipc")->error("ending a failed frame: {}", end.error().message);
    // Nothing of it can still be running, or nothing can be waited for: it ends now.
    // Parts of it still on the GPU end it again; in_flight_ no longer knows it.
    if (!end) {
        if (const cl_int err = gpu_.finishAll(); err != CL_SUCCESS)
            log::get("ipc")->error("{}", gpu::clFailure("clFinish", err, "a failed frame"));
    }
    auto node = in_flight_.extract(serial);
    completeFrame(std::move(node.mapped()), CL_COMPLETE, monotonicNs());
}

void Server::expireWaitingFrames(uint64_t now_ns)
{
    for (auto& [token, client] : clients_) {
        std::deque<PendingFrame>* waiting = fairQueueOf(client.id).waiting(client.id);
        // A started frame is on its way: only its parts are still to go to the GPU.
        const auto past = [&](const PendingFrame& frame) {
            return !frame.started && frame.deadline_ns && frame.deadline_ns <= now_ns;
        };
        if (!waiting || std::none_of(waiting->begin(), waiting->end(), past))
            continue;
        std::deque<PendingFrame> kept, expired;
        for (PendingFrame& frame : *waiting)
            (past(frame) ? expired : kept).push_back(std::move(frame));
        *waiting = std::move(kept);
        for (const PendingFrame& frame : expired) {
            const uint64_t deadline_us = (frame.deadline_ns - frame.queued_ns) / 1000;
            endWaitingFrame(frame, wire::FrameStatus::Dropped,
                            fmt::format("not started within its deadline of {} us", deadline_us));
        }
    }
}

void Server::frameSkipped(const std::string& token, uint32_t session_id, uint64_t arrival)
{
    ClientState* client = clientByToken(token);
    if (!client)
        return; // no frame of it will begin again
    const auto state = client->sessions.find(session_id);
    if (state == client->sessions.end())
        return;
    // A frame after it that began already read the state as it was: too late for it,
    // and the frames after that one have a frame before them.
    if (state->second.last_begun > arrival)
        return;
    // The client's queue holds its frames in the order they arrived (held Submits are
    // taken before newer ones): the first of the session's after `arrival` is the next.
    if (std::deque<PendingFrame>* waiting = fairQueueOf(client->id).waiting(client->id))
        for (PendingFrame& frame : *waiting)
            if (frame.session_id == session_id && frame.arrival > arrival && !frame.started) {
                frame.reset_state = true;
                return;
            }
    auto& after = state->second.reset_after;
    after = after ? std::min(*after, arrival) : arrival;
}

void Server::endWaitingFrame(const PendingFrame& frame, wire::FrameStatus status, const std::string& error)
{
    frameSkipped(frame.token, frame.session_id, frame.arrival);
    ClientState* client = clientByToken(frame.token);
    if (!client)
        return;
    --client->in_flight;
    if (auto state = client->sessions.find(frame.session_id); state != client->sessions.end()) {
        --state->second.in_flight;
        ++(status == wire::FrameStatus::Dropped ? state->second.counters.dropped : state->second.counters.failed);
    }
    sendDone(*client, frame.session_id, frame.sequence, {status, error, frame.queued_ns, 0, monotonicNs(), {}});
}

void Server::onCompletions()
{
    for (const Completion& completion : completions_.take())
        completePart(completion);
    // The frames that ended let go of their buffers and sessions.
    for (auto& [token, client] : clients_)
        retireUnused(client);
    schedule();
}

void Server::completePart(const Completion& completion)
{
    // Each lane's parts end in the order they were enqueued there, but the lanes' in any
    // order. A frame's end waited for all its parts: those on another lane whose
    // completion is not seen yet have ended too, and count before it.
    const scheduler::WorkAhead::Part* found = work_ahead_.find(completion.frame);
    if (!found)
        return;
    if (found->last)
        for (const uint64_t serial : work_ahead_.otherParts(found->frame, completion.frame))
            completePart({serial, completion.execution_status, completion.callback_ns});
    const auto seen = work_ahead_.complete(completion.frame, completion.callback_ns);
    if (!seen)
        return;
    const scheduler::WorkAhead::Part& part = seen->part;
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
    InFlightFrame& frame = it->second;
    if (part.part != abandoned_part) {
        // What it cost, profiled, or (without profiling) its time on the GPU's queue
        // from when the GPU could take it; the fair queue charged the prediction.
        uint64_t gpu_ns = frame.pending.session->partNs(frame.frame.frame, part.part);
        if (gpu_ns == 0)
            gpu_ns = seen->held_ns;
        frame.gpu_ns += gpu_ns;
        fairQueueOf(frame.client_id).charge(frame.client_id, int64_t(gpu_ns) - int64_t(part.predicted_ns));
        if (ClientState* client = clientByToken(frame.pending.token))
            client->gpu_ns += gpu_ns;
    }
    // A part that failed fails the frame, which still ends with its last part: the
    // parts behind it use its buffers until then.
    if (completion.execution_status != CL_COMPLETE) {
        gpu_failed_ = true;
        if (frame.failure.empty())
            frame.failure = fmt::format("the GPU failed the frame: {}", gpu::clErrorName(completion.execution_status));
    }
    if (!part.last)
        return;
    InFlightFrame ended = std::move(frame);
    in_flight_.erase(it);
    completeFrame(std::move(ended), completion.execution_status, completion.callback_ns);
}

void Server::completeFrame(InFlightFrame frame, cl_int status, uint64_t callback_ns)
{
    PendingFrame& pending = frame.pending;
    pending.input->endAccess(memory::ImportedBuffer::Access::Read);
    pending.output->endAccess(memory::ImportedBuffer::Access::Write);

    const uint64_t end_ns = monotonicNs();
    DoneFields done{wire::FrameStatus::Ok,
                    {},
                    pending.queued_ns,
                    frame.start_ns,
                    end_ns,
                    {},
                    frame.frame.done() ? gpuEndNs(frame.frame.done, frame.last_part_ns) : 0,
                    callback_ns};
    if (status != CL_COMPLETE && frame.failure.empty())
        frame.failure = fmt::format("the GPU failed the frame: {}", gpu::clErrorName(status));
    const bool ran = frame.failure.empty();
    if (!ran) {
        done.status = wire::FrameStatus::Failed;
        done.error = frame.failure;
        frameSkipped(pending.token, pending.session_id, pending.arrival);
    } else {
        done.stages = pending.session->stageTimes(frame.frame.frame);
    }
    // The Done first: what follows only keeps the books, and the client waits.
    ClientState* client = clientByToken(pending.token); // null: it went away; its buffers go with `frame`
    const log::ScopedFields about({client ? client->name : std::string(), pending.session_id,
                                   pending.session->pipelineName()});
    if (client) {
        --client->in_flight;
        if (auto state = client->sessions.find(pending.session_id); state != client->sessions.end()) {
            SessionState& session = state->second;
            --session.in_flight;
            ++(done.status == wire::FrameStatus::Ok ? session.counters.done : session.counters.failed);
            if (done.status == wire::FrameStatus::Ok)
                session.metrics.add(end_ns, end_ns - pending.queued_ns);
        }
        sendDone(*client, pending.session_id, pending.sequence, done);
    }
    if (ran)
        pending.session->frameCompleted(frame.frame.frame, frame.gpu_ns);
    if (work_ahead_.empty())
        perf_hint_.workEnded(std::chrono::steady_clock::now());
    if (client && ran && !traces_.empty())
        traceFrame(*client, frame);
}

void Server::traceFrame(const ClientState& client, const InFlightFrame& frame)
{
    const PendingFrame& pending = frame.pending;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& slice : pending.session->dispatchSlices(frame.frame.frame)) {
        const scheduler::TraceSlice traced{client.id,        client.name,    pending.session_id,
                                           pending.session->pipelineName(), slice.stage, slice.name,
                                           pending.sequence, slice.start_ns, slice.end_ns};
        for (OpenTrace& trace : traces_)
            if (now < trace.ends)
                trace.window.add(traced);
    }
}

void Server::onTrace(ClientState& client, const wire::TraceRequest& request)
{
    if (request.seconds() < 1 || request.seconds() > 60) {
        sendError(client.identity, request.request_id(),
                  fmt::format("a trace lasts 1 to 60 seconds, not {}", request.seconds()));
        return;
    }
    // Each window holds up to a million slices (some 50 MB) until it closes: one per
    // client, and a few at once.
    if (std::any_of(traces_.begin(), traces_.end(), [&](const OpenTrace& t) { return t.identity == client.identity; })) {
        sendError(client.identity, request.request_id(), "a trace of this client is being recorded already");
        return;
    }
    if (traces_.size() >= max_open_traces) {
        sendError(client.identity, request.request_id(),
                  fmt::format("{} traces are being recorded already; try again when one ends", traces_.size()));
        return;
    }
    const auto ends = std::chrono::steady_clock::now() + std::chrono::seconds(request.seconds());
    traces_.push_back({client.identity, request.request_id(), ends, scheduler::TraceWindow(ends)});
    armSchedulerTimer();
}

void Server::onSchedulerTimer()
{
    uint64_t expirations = 0;
    [[maybe_unused]] ssize_t got = read(scheduler_timer_.get(), &expirations, sizeof expirations);
    const auto now = std::chrono::steady_clock::now();
    perf_hint_.tick(now);
    for (auto it = traces_.begin(); it != traces_.end();) {
        if (now < it->ends) {
            ++it;
            continue;
        }
        const std::string json = it->window.json();
        flatbuffers::FlatBufferBuilder builder;
        send(it->identity,
             protocol::finishEnvelope(builder, wire::CreateTraceReplyDirect(builder, it->request_id, json.c_str())));
        log::get("ipc")->info("trace of {} dispatches sent", it->window.size());
        it = traces_.erase(it);
    }
    if (next_status_ns_ && monotonicNs() >= next_status_ns_)
        sendPreparingStatuses();
    schedule();
}

void Server::armSchedulerTimer()
{
    uint64_t earliest = UINT64_MAX;
    for (const auto& [token, client] : clients_)
        if (const std::deque<PendingFrame>* waiting = fairQueueOf(client.id).waiting(client.id))
            for (const PendingFrame& frame : *waiting)
                if (frame.deadline_ns && !frame.started)
                    earliest = std::min(earliest, frame.deadline_ns);
    if (const auto idle = perf_hint_.idleDeadline(); idle && in_flight_.empty())
        earliest = std::min(earliest, monotonicNs(*idle));
    if (feed_at_ns_)
        earliest = std::min(earliest, feed_at_ns_);
    if (next_status_ns_)
        earliest = std::min(earliest, next_status_ns_);
    for (const OpenTrace& trace : traces_)
        earliest = std::min(earliest, monotonicNs(trace.ends));

    itimerspec when{}; // all zero: disarmed
    if (earliest != UINT64_MAX) {
        earliest = std::max<uint64_t>(earliest, 1); // zero would disarm
        when.it_value = {time_t(earliest / 1000000000u), long(earliest % 1000000000u)};
    }
    timerfd_settime(scheduler_timer_.get(), TFD_TIMER_ABSTIME, &when, nullptr);
}

void Server::drain(std::chrono::milliseconds timeout)
{
    const auto waiting = [&] {
        size_t held = 0;
        for (const auto& [token, client] : clients_)
            held += client.held.size();
        size_t queued = 0;
        for (const auto& queue : fair_queues_)
            queued += queue.waitingCount();
        return in_flight_.size() + queued + held;
    };
    if (waiting() == 0)
        return;
    log::get("ipc")->info("draining {} frames", waiting());
    // Completion callbacks run on the runtime's thread; each completion starts the
    // next waiting frame.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    schedule();
    while (waiting() > 0 && std::chrono::steady_clock::now() < deadline) {
        const auto completions = completions_.take();
        for (const Completion& completion : completions)
            completePart(completion);
        schedule();
        if (completions.empty())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

} // namespace framecl::ipc
