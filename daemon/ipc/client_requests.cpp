// Requests other than frames: sessions, buffer release, statistics.
#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "envelope.hpp"
#include "framecl_build_config.h"
#include "ipc/client_text.hpp"
#include "ipc/server.hpp"

namespace framecl::ipc {
namespace {

const char* backpressureName(wire::Backpressure mode)
{
    switch (mode) {
    case wire::Backpressure::Reject:
        return "reject";
    case wire::Backpressure::DropOldest:
        return "drop_oldest";
    case wire::Backpressure::Block:
        break;
    }
    return "block";
}

// How far back `framecl stats` counts frames per second.
constexpr uint64_t fps_window_ns = 5'000'000'000;

// The strings of an OpenSession, checked before any is used or echoed.
Result<void> checkSessionStrings(const wire::OpenSession& request)
{
    if (request.pipeline())
        if (auto valid = checkClientText(request.pipeline()->string_view(), "OpenSession.pipeline",
                                         max_client_string_bytes);
            !valid)
            return valid;
    if (const auto* overrides = request.overrides())
        for (const wire::Parameter* parameter : *overrides) {
            if (parameter->key())
                if (auto valid = checkClientText(parameter->key()->string_view(), "OpenSession.overrides.key",
                                                 max_client_string_bytes);
                    !valid)
                    return valid;
            if (parameter->string_value())
                if (auto valid = checkClientText(parameter->string_value()->string_view(),
                                                 "OpenSession.overrides.string_value", max_client_string_bytes);
                    !valid)
                    return valid;
        }
    return {};
}

} // namespace

void Server::onOpenSession(ClientState& client, const wire::OpenSession& request)
{
    const uint32_t request_id = request.request_id();
    if (auto valid = checkSessionStrings(request); !valid) {
        sendError(client.identity, request_id, valid.error().message);
        return;
    }
    const std::string name = request.pipeline() ? request.pipeline()->str() : "";
    if (client.sessions.size() + client.sessions_opening >= config_.limits.max_sessions_per_client) {
        sendError(client.identity, request_id,
                  fmt::format("limits.max_sessions_per_client = {} reached", config_.limits.max_sessions_per_client));
        return;
    }
    if (request.overrides() && request.overrides()->size() > 0) {
        const auto* key = request.overrides()->Get(0)->key();
        sendError(client.identity, request_id,
                  fmt::format("pipeline '{}' has no parameter '{}' to override", name, key ? key->str() : ""));
        return;
    }
    if (!wire::EnumNameBackpressure(request.backpressure())[0]) {
        sendError(client.identity, request_id,
                  fmt::format("backpressure {} is not one of block, reject, drop_oldest", int(request.backpressure())));
        return;
    }
    const wire::FrameLayout* input = request.input();
    if (!input) {
        sendError(client.identity, request_id, "OpenSession needs the input format and size");
        return;
    }
    const pipeline::FrameShape shape{input->fourcc(), input->width(), input->height()};
    if (shape.width == 0 || shape.height == 0 ||
        uint64_t(shape.width) * shape.height > config_.limits.max_frame_pixels) {
        sendError(client.identity, request_id,
                  fmt::format("{} is empty or over limits.max_frame_pixels = {}", pipeline::describe(shape),
                              config_.limits.max_frame_pixels));
        return;
    }

    auto definition = catalog_.find(name);
    if (!definition) {
        if (const auto left_out = catalog_.left_out.find(name); left_out != catalog_.left_out.end()) {
            // Its first line: a kernel that did not build goes on with the compiler's log.
            const std::string& problem = left_out->second;
            sendError(client.identity, request_id,
                      fmt::format("pipeline '{}' is not offered: {}", name, problem.substr(0, problem.find('\n'))));
            return;
        }
        std::string known;
        for (const auto& p : catalog_.pipelines)
            known += (known.empty() ? "" : ", ") + p->name;
        sendError(client.identity, request_id, fmt::format("no pipeline named '{}' (offered: {})", name, known));
        return;
    }
    // Opened off the loop (pipeline/session_preparer.hpp): the first session of a stage
    // and size on this device times its candidates, and every session calibrates and
    // runs its recording once, while other clients' frames go on.
    pipeline::SessionOptions options;
    options.recording = recording_;
    options.onchip_intermediates = config_.gpu.onchip_intermediates;
    options.max_frame_pixels = config_.limits.max_frame_pixels;
    options.kernel_budget_ns = uint64_t(config_.gpu.kernel_budget_ms * 1e6);
    options.priority_lane = client.priority_lane;
    retireUnused(client);
    const uint64_t held = client.buffer_bytes + client.session_bytes;
    if (held >= config_.limits.max_bytes_per_client) {
        sendError(client.identity, request_id,
                  fmt::format("pipeline '{}': limits.max_bytes_per_client = {} is used up ({} bytes in buffers, {} in "
                              "sessions)",
                              name, config_.limits.max_bytes_per_client, client.buffer_bytes, client.session_bytes));
        return;
    }
    options.max_device_bytes = config_.limits.max_bytes_per_client - held;
    // The preparer's queue is bounded per user and overall, so that no user's clients
    // keep another's sessions waiting behind theirs for long.
    const uid_t uid = client.peer ? client.peer->uid : 0;
    const auto of_user = size_t(std::count_if(opening_.begin(), opening_.end(),
                                              [&](const auto& opening) { return opening.second.uid == uid; }));
    if (of_user >= config_.limits.max_sessions_per_client) {
        sendError(client.identity, request_id,
                  fmt::format("pipeline '{}': user {} has {} sessions being opened already "
                              "(limits.max_sessions_per_client): ask again once one is open",
                              name, uid, of_user));
        return;
    }
    if (opening_.size() >= size_t(config_.limits.max_clients) * config_.limits.max_sessions_per_client) {
        sendError(client.identity, request_id,
                  fmt::format("pipeline '{}': {} sessions are being opened already (limits.max_clients x "
                              "limits.max_sessions_per_client): ask again once one is open",
                              name, opening_.size()));
        return;
    }
    const uint64_t ticket = next_ticket_++;
    opening_.emplace(ticket, OpeningSession{client.token, uid, request_id, name, request.backpressure(),
                                            request.deadline_us()});
    ++client.sessions_opening;
    preparer_.prepare({ticket, std::move(definition), shape, std::move(options), tuner_, {client.name, {}, name}});
    if (next_status_ns_ == 0) {
        next_status_ns_ = monotonicNs() + preparing_status_period_ns;
        armSchedulerTimer();
    }
}

void Server::sendPreparingStatuses()
{
    for (const auto& [ticket, opening] : opening_) {
        const ClientState* client = clientByToken(opening.token);
        if (!client)
            continue;
        flatbuffers::FlatBufferBuilder builder;
        send(client->identity, protocol::finishEnvelope(builder, wire::CreateSessionPreparingDirect(
                                                                     builder, opening.request_id,
                                                                     opening.status.c_str())));
    }
    next_status_ns_ = opening_.empty() ? 0 : monotonicNs() + preparing_status_period_ns;
    armSchedulerTimer();
}

void Server::onSessionsPrepared()
{
    auto [progress, sessions, opening_work] = preparer_.take();
    for (auto& work : opening_work)
        queueOpeningWork(std::move(work));
    for (auto& step : progress)
        if (const auto it = opening_.find(step.ticket); it != opening_.end())
            it->second.status = std::move(step.status);
    if (!progress.empty())
        sendPreparingStatuses();
    for (auto& prepared : sessions) {
        auto it = opening_.find(prepared.ticket);
        if (it == opening_.end())
            continue;
        const OpeningSession opening = std::move(it->second);
        opening_.erase(it);
        ClientState* client = clientByToken(opening.token);
        if (!client)
            continue; // it went away meanwhile: the session goes now
        --client->sessions_opening;
        auto& session = prepared.session;
        if (!session) {
            sendError(client->identity, opening.request_id,
                      fmt::format("pipeline '{}': {}", opening.pipeline, session.error().message));
            continue;
        }
        // Its buffers may have grown while the session was opened.
        retireUnused(*client);
        if (client->buffer_bytes + client->session_bytes + (*session)->deviceBytes() >
            config_.limits.max_bytes_per_client) {
            sendError(client->identity, opening.request_id,
                      fmt::format("pipeline '{}': {} bytes of intermediates and constants would pass "
                                  "limits.max_bytes_per_client = {} ({} bytes in buffers, {} in sessions)",
                                  opening.pipeline, (*session)->deviceBytes(), config_.limits.max_bytes_per_client,
                                  client->buffer_bytes, client->session_bytes));
            continue;
        }
        openedSession(*client, opening, std::move(*session));
    }
    if (!opening_work.empty())
        feed();
}

void Server::queueOpeningWork(std::shared_ptr<pipeline::PendingTurn> work)
{
    const auto opening = opening_.find(work->ticket());
    ClientState* client = opening == opening_.end() ? nullptr : clientByToken(opening->second.token);
    if (!client)
        return; // its client went away: the opening is cancelled, and stops waiting for it
    scheduler_.queueOpeningWork(client->id, std::move(work));
}

void Server::openedSession(ClientState& client, const OpeningSession& opening,
                           std::unique_ptr<pipeline::Session> session)
{
    const uint32_t id = client.next_session++;
    const pipeline::FrameShape out = session->output();
    const std::string recording = gpu::recordingModeName(session->recording());
    const log::ScopedFields about({client.name, id, opening.pipeline});
    log::get("ipc")->info("client '{}': session {} of '{}' for {} (backpressure {}{})", client.name, id,
                          opening.pipeline, pipeline::describe(session->input()), backpressureName(opening.backpressure),
                          opening.deadline_us ? fmt::format(", deadline {} us", opening.deadline_us) : "");
    SessionState state;
    client.session_bytes += session->deviceBytes();
    state.parameters = session->openParameters();
    state.session = std::move(session);
    state.recording = recording;
    state.backpressure = opening.backpressure;
    state.deadline_ns = uint64_t(opening.deadline_us) * 1000;
    client.sessions.emplace(id, std::move(state));

    framecl_frame_layout packed{};
    framecl_packed_layout(out.fourcc, out.width, out.height, &packed);
    flatbuffers::FlatBufferBuilder builder;
    std::vector<wire::Plane> planes;
    for (uint32_t p = 0; p < packed.num_planes; ++p)
        planes.emplace_back(packed.planes[p].offset, packed.planes[p].stride);
    auto layout = wire::CreateFrameLayoutDirect(builder, out.fourcc, out.width, out.height, &planes);
    send(client.identity, protocol::finishEnvelope(builder, wire::CreateSessionOpenedDirect(
                                                                builder, opening.request_id, id, layout,
                                                                recording.c_str())));
}

void Server::onCloseSession(ClientState& client, const wire::CloseSession& request)
{
    const auto found = client.sessions.find(request.session());
    if (found == client.sessions.end()) {
        sendError(client.identity, request.request_id(), fmt::format("no session {}", request.session()));
        return;
    }
    endEveryFencedFrame(client, wire::FrameStatus::Dropped, "its session was closed while it waited for fences",
                        request.session());
    client.retired_sessions.push_back(std::move(found->second.session)); // its frames in flight still use it
    client.sessions.erase(found);
    scheduler_.forgetSession(client.id, request.session());
    retireUnused(client);
    sendAck(client.identity, request.request_id());
}

void Server::onReleaseBuffers(ClientState& client, const wire::ReleaseBuffers& request)
{
    std::vector<uint32_t> unknown;
    if (const auto* ids = request.ids()) {
        for (uint32_t id : *ids) {
            auto it = client.buffers.find(id);
            if (it == client.buffers.end()) {
                unknown.push_back(id);
                continue;
            }
            client.retired_buffers.push_back(std::move(it->second)); // a frame in flight keeps its own reference
            client.buffers.erase(it);
        }
    }
    retireUnused(client);
    if (!unknown.empty()) {
        sendError(client.identity, request.request_id(), fmt::format("no buffer {}", fmt::join(unknown, ", ")));
        return;
    }
    sendAck(client.identity, request.request_id());
}

void Server::retireUnused(ClientState& client)
{
    std::erase_if(client.retired_buffers, [&](const std::shared_ptr<memory::ImportedBuffer>& buffer) {
        if (buffer.use_count() > 1)
            return false;
        client.buffer_bytes -= buffer->size();
        return true;
    });
    std::erase_if(client.retired_sessions, [&](const std::shared_ptr<pipeline::Session>& session) {
        if (session.use_count() > 1)
            return false;
        client.session_bytes -= session->deviceBytes();
        return true;
    });
}

void Server::onStats(ClientState& client, const wire::StatsRequest& request)
{
    const std::string json = statsJson();
    flatbuffers::FlatBufferBuilder builder;
    send(client.identity,
         protocol::finishEnvelope(builder, wire::CreateStatsReplyDirect(builder, request.request_id(), json.c_str())));
}

std::string Server::statsJson() const
{
    using nlohmann::json;
    const uint64_t now_ns = monotonicNs();
    uint64_t gpu_ns_total = 0;
    for (const auto& [token, client] : clients_)
        gpu_ns_total += client.gpu_ns;
    json clients = json::array();
    for (const auto& [token, client] : clients_) {
        // A client that has not bound its buffer socket is not known to be allowed: it
        // is not shown, nor counted.
        if (!client.buffer_connection.valid())
            continue;
        json import_paths = json::object(), buffer_kinds = json::object();
        uint64_t cpu_syncs = 0;
        for (const auto& [id, buffer] : client.buffers) {
            import_paths[memory::importPathName(buffer->path())] =
                import_paths.value(memory::importPathName(buffer->path()), 0) + 1;
            buffer_kinds[memory::fdKindName(buffer->kind())] =
                buffer_kinds.value(memory::fdKindName(buffer->kind()), 0) + 1;
            cpu_syncs += buffer->cpuSyncs();
        }
        json sessions = json::array();
        for (const auto& [id, state] : client.sessions) {
            json stages = json::array();
            uint64_t overruns = 0;
            for (const auto& stage : state.session->budgetStats()) {
                overruns += stage.overruns;
                stages.push_back({{"stage", stage.stage},
                                  {"tiles", stage.tiles},
                                  {"longest_dispatch_ms", double(stage.longest_ns) / 1e6},
                                  {"overruns", stage.overruns},
                                  {"untileable", stage.untileable},
                                  {"estimated", stage.estimated},
                                  {"image_copies", stage.image_copies},
                                  {"fusion", stage.fusion}});
            }
            const LatencySummary latency = state.metrics.latency();
            sessions.push_back({{"id", id},
                                {"pipeline", state.session->pipelineName()},
                                {"recording", state.recording},
                                {"backpressure", backpressureName(state.backpressure)},
                                {"deadline_us", state.deadline_ns / 1000},
                                {"frames_done", state.counters.done},
                                {"frames_failed", state.counters.failed},
                                {"frames_dropped", state.counters.dropped},
                                {"frames_busy", state.counters.busy},
                                {"frames_in_flight", state.in_flight},
                                {"fps", state.metrics.fps(now_ns, fps_window_ns)},
                                {"latency_ms", {{"p50", latency.p50_ms}, {"p99", latency.p99_ms}, {"max", latency.max_ms}}},
                                {"budget_overruns", overruns},
                                {"stages", stages}});
        }
        json entry = {{"name", client.name},
                      {"id", client.id},
                      {"class", client.client_class.empty() ? json(nullptr) : json(client.client_class)},
                      {"weight", client.weight},
                      {"gpu_share", gpu_ns_total ? double(client.gpu_ns) / double(gpu_ns_total) : 0.0},
                      {"frames_waiting",
                       scheduler_.framesWaiting(client.id) + client.held.size() + client.fenced.size()},
                      {"fence_waits", client.fence_waits},
                      {"buffer_waits", client.buffer_waits},
                      {"buffers", client.buffers.size()},
                      {"bytes", client.buffer_bytes},
                      {"session_bytes", client.session_bytes},
                      {"import_paths", import_paths},
                      {"buffer_kinds", buffer_kinds},
                      {"dma_buf_syncs", cpu_syncs},
                      {"dones_unsent", client.dones_unsent},
                      {"sessions", sessions}};
        if (client.peer) {
            entry["pid"] = client.peer->pid;
            entry["uid"] = client.peer->uid;
        }
        clients.push_back(entry);
    }
    const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const char* perf_hint = scheduler_.perfHint();
    json stats = {{"daemon",
                   {{"version", FRAMECL_VERSION},
                    {"device", gpu_.capabilities().name},
                    {"uptime_s", uptime},
                    {"kernel_budget_ms", config_.gpu.kernel_budget_ms},
                    {"perf_hint", perf_hint ? json(perf_hint) : json(nullptr)},
                    {"implicit_sync", implicit_sync_off_.empty() ? "on" : "off: " + implicit_sync_off_},
                    {"release_fences", release_fences_ ? "on" : "off: " + release_fences_off_},
                    {"timing", gpu_.clock().device() ? "device" : "host: " + gpu_.clock().reason}}},
                  {"clients", clients},
                  {"released_on_disconnect",
                   {{"clients", released_.clients}, {"buffers", released_.buffers}, {"sessions", released_.sessions}}}};
    // Every string in it was checked at the door; replace, never throw, all the same:
    // an exception here would end the event loop and every client's stream.
    return stats.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace framecl::ipc
