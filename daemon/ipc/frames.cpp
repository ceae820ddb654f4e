// Frames, the protocol's side: a Submit is refused at once, held (backpressure
// `block`), or checked and handed to the scheduler (scheduler/frame_scheduler.hpp),
// which runs it and says when it ended; exactly one Done per Submit.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <sys/socket.h>
#include <sysexits.h>
#include <sys/timerfd.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "envelope.hpp"
#include "ipc/client_text.hpp"
#include "ipc/server.hpp"

namespace framecl::ipc {
namespace {

// `framecl trace` windows recording at once, over all clients.
constexpr size_t max_open_traces = 4;

wire::FrameStatus frameStatus(scheduler::Outcome outcome)
{
    switch (outcome) {
    case scheduler::Outcome::Ran:
        return wire::FrameStatus::Ok;
    case scheduler::Outcome::Dropped:
        return wire::FrameStatus::Dropped;
    case scheduler::Outcome::Failed:
        break;
    }
    return wire::FrameStatus::Failed;
}

} // namespace

void Server::sendDone(ClientState& client, uint32_t session, uint64_t sequence, const DoneFields& done)
{
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<wire::StageTime>> stages;
    for (const auto& [name, ns] : done.stages)
        stages.push_back(wire::CreateStageTimeDirect(builder, name.c_str(), ns));
    flatbuffers::Offset<wire::FrameStatistics> statistics;
    if (const framecl_statistics* s = done.statistics) {
        const auto words = [&](const auto& array) {
            return builder.CreateVector(reinterpret_cast<const uint32_t*>(&array), sizeof array / sizeof(uint32_t));
        };
        statistics = wire::CreateFrameStatistics(builder, FRAMECL_STATISTICS_ZONES_X, FRAMECL_STATISTICS_ZONES_Y,
                                                 words(s->sums), words(s->counts), words(s->histogram));
    }
    auto message = wire::CreateDoneDirect(builder, session, sequence, done.status,
                                          done.error.empty() ? nullptr : done.error.c_str(), done.queued_ns,
                                          done.start_ns, done.end_ns, &stages, done.gpu_end_ns, done.callback_ns,
                                          statistics);
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

void Server::onSubmit(ClientState& client, const wire::Submit& submit, std::vector<UniqueFd>& fds,
                      const std::string& fds_lost)
{
    HeldSubmit fields{submit.session(), submit.input_buffer(), submit.output_buffer(), submit.sequence(),
                      monotonicNs(), next_arrival_++, nullptr, submit.release_fence()};
    auto acquire_fence = receiveAcquireFence(submit, fds, fds_lost);
    auto taken = acquire_fence ? takeParameters(client, submit, fields) : Result<void>{};
    if (!acquire_fence || !taken) {
        if (auto state = client.sessions.find(fields.session); state != client.sessions.end()) {
            ++state->second.counters.failed;
            scheduler_.skipped(client.id, fields.session, fields.arrival);
        }
        const std::string& why = acquire_fence ? taken.error().message : acquire_fence.error().message;
        sendDone(client, fields.session, fields.sequence,
                 {wire::FrameStatus::Failed, why, fields.queued_ns, 0, monotonicNs(), {}});
        return;
    }
    fields.acquire_fence = std::move(*acquire_fence);
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
        feed();
        return;
    }
    queueFrame(client, state, std::move(*frame), fields);
    feed();
}

Result<void> Server::takeParameters(ClientState& client, const wire::Submit& submit, HeldSubmit& fields)
{
    auto state = client.sessions.find(fields.session);
    if (state == client.sessions.end())
        return {};
    fields.parameters = state->second.parameters;
    const auto* changes = submit.parameters();
    if (!changes || changes->size() == 0)
        return {};
    std::vector<pipeline::FrameParameter> taken;
    for (const wire::FrameParameter* change : *changes) {
        const std::string_view key = change->key() ? change->key()->string_view() : std::string_view();
        if (auto valid = checkClientText(key, "Submit.parameters.key", max_client_string_bytes); !valid)
            return valid;
        if (!change->values() || change->values()->size() == 0)
            return fail(fmt::format("Submit.parameters: '{}' of stage {} has no value", key, change->stage()));
        taken.push_back({change->stage(), std::string(key), {change->values()->begin(), change->values()->end()}});
    }
    auto next = state->second.session->changeParameters(*state->second.parameters, taken);
    if (!next)
        return fail(fmt::format("the frame's parameters: {}", next.error().message));
    state->second.parameters = fields.parameters = std::move(*next);
    return {};
}

tl::expected<scheduler::Frame, Server::Refusal> Server::acceptFrame(ClientState& client, const HeldSubmit& submit)
{
    auto session_it = client.sessions.find(submit.session);
    if (session_it == client.sessions.end())
        return tl::unexpected(Refusal{wire::FrameStatus::Failed, fmt::format("no session {}", submit.session)});
    SessionState& state = session_it->second;
    // Every frame of a session that does not run to its end leaves the next with no
    // frame before it (plugin.h, framecl_state).
    const auto refuse = [&](const std::string& error) {
        ++state.counters.failed;
        scheduler_.skipped(client.id, submit.session, submit.arrival);
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
    if (!scheduler_.gpuLost().empty())
        return refuse(scheduler_.gpuLost());
    return scheduler::Frame{client.id,
                            submit.session,
                            submit.sequence,
                            state.session,
                            input_it->second,
                            output_it->second,
                            submit.queued_ns,
                            submit.arrival,
                            state.deadline_ns ? submit.queued_ns + state.deadline_ns : 0,
                            nullptr,
                            submit.parameters};
}

void Server::applyBackpressure(ClientState& client, SessionState& state, const HeldSubmit& submit,
                               scheduler::Frame frame)
{
    const uint32_t limit = config_.limits.max_inflight_per_client;
    const auto busy = [&](const std::string& why) {
        ++state.counters.busy;
        scheduler_.skipped(client.id, submit.session, submit.arrival);
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
    if (!scheduler_.dropOldest(client.id, submit.session, "replaced by a newer frame (backpressure drop_oldest)")) {
        busy(fmt::format("{} frames in flight already and none of session {} waits to be dropped", client.in_flight,
                         submit.session));
        return;
    }
    queueFrame(client, state, std::move(frame), submit);
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
        queueFrame(client, client.sessions.at(submit.session), std::move(*frame), submit);
    }
}

void Server::feed()
{
    // Whatever freed a slot — a frame done, dropped, expired, or failed to start — the
    // client's held Submits take it first, in the order they came. Before them, the
    // frames that waited for earlier ones which have now ended go on.
    for (auto& [token, client] : clients_) {
        handOverFencedFrames(client);
        admitHeld(client);
    }
    scheduler_.schedule();
    armSchedulerTimer();
}

void Server::frameEnded(const scheduler::FrameEnd& end)
{
    const scheduler::Frame& frame = end.frame;
    ClientState* client = clientById(frame.client_id); // null: it went away; its buffers go with the frame
    if (!client)
        return;
    const log::ScopedFields about({client->name, frame.session_id, frame.session->pipelineName()});
    const wire::FrameStatus status = frameStatus(end.outcome);
    --client->in_flight;
    endBufferUse(*client, frame);
    client->gpu_ns += end.gpu_ns;
    if (auto state = client->sessions.find(frame.session_id); state != client->sessions.end()) {
        SessionState& session = state->second;
        --session.in_flight;
        switch (status) {
        case wire::FrameStatus::Ok:
            ++session.counters.done;
            session.metrics.add(end.end_ns, end.end_ns - frame.queued_ns);
            break;
        case wire::FrameStatus::Dropped:
            ++session.counters.dropped;
            break;
        default:
            ++session.counters.failed;
            break;
        }
    }
    sendDone(*client, frame.session_id, frame.sequence,
             {status, end.error, frame.queued_ns, end.start_ns, end.end_ns, end.stages, end.gpu_end_ns,
              end.callback_ns, end.ran ? end.ran->statistics.get() : nullptr});
    if (end.ran && !traces_.empty())
        traceFrame(*client, end);
}

void Server::gpuLost(const std::string& reason)
{
    for (auto& [token, client] : clients_)
        endEveryFencedFrame(client, wire::FrameStatus::Failed, reason);
    for (auto& [token, client] : clients_)
        for (const HeldSubmit& submit : std::exchange(client.held, {}))
            sendDone(client, submit.session, submit.sequence,
                     {wire::FrameStatus::Failed, reason, submit.queued_ns, 0, monotonicNs(), {}});
    loop_.stop(EX_UNAVAILABLE, "failed: " + reason);
}

void Server::onCompletions()
{
    scheduler_.onCompletions();
    // The frames that ended let go of their buffers and sessions.
    for (auto& [token, client] : clients_)
        retireUnused(client);
    feed();
}

void Server::traceFrame(const ClientState& client, const scheduler::FrameEnd& end)
{
    const scheduler::Frame& frame = end.frame;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& slice : frame.session->dispatchSlices(*end.ran)) {
        const scheduler::TraceSlice traced{client.id,      client.name,    frame.session_id,
                                           frame.session->pipelineName(), slice.stage, slice.name,
                                           frame.sequence, slice.start_ns, slice.end_ns};
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
    scheduler_timer_at_.reset(); // it fired: disarmed, whatever was set
    const auto now = std::chrono::steady_clock::now();
    expireFencedFrames(monotonicNs());
    scheduler_.tick();
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
    feed();
}

void Server::armSchedulerTimer()
{
    uint64_t earliest = scheduler_.nextWakeNs().value_or(UINT64_MAX);
    if (next_status_ns_)
        earliest = std::min(earliest, next_status_ns_);
    earliest = std::min(earliest, nextFenceGiveUpNs().value_or(UINT64_MAX));
    for (const OpenTrace& trace : traces_)
        earliest = std::min(earliest, monotonicNs(trace.ends));

    // Most calls find the time unchanged (no deadline, nothing to wake for while frames
    // run): the syscall is skipped then, as it costs the loop on every Submit.
    if (scheduler_timer_at_ == earliest)
        return;
    scheduler_timer_at_ = earliest;
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
        return scheduler_.framesLeft() + held + fenced_frames_;
    };
    if (waiting() == 0)
        return;
    log::get("ipc")->info("draining {} frames", waiting());
    // The loop has stopped: its completions are looked for here, each ending frame
    // making room for the next.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    feed();
    while (waiting() > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        for (auto& [token, client] : clients_)
            releaseFencedFrames(client);
        expireFencedFrames(monotonicNs());
        onCompletions();
    }
}

} // namespace framecl::ipc
