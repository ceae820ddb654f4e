// Requests other than frames: sessions, buffer release, statistics.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "envelope.hpp"
#include "framecl_build_config.h"
#include "ipc/server.hpp"

namespace framecl::ipc {

void Server::onOpenSession(ClientState& client, const wire::OpenSession& request)
{
    const uint32_t request_id = request.request_id();
    const std::string name = request.pipeline() ? request.pipeline()->str() : "";
    if (client.sessions.size() >= config_.limits.max_sessions_per_client) {
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
        std::string known;
        for (const auto& p : catalog_.pipelines)
            known += (known.empty() ? "" : ", ") + p->name;
        sendError(client.identity, request_id, fmt::format("no pipeline named '{}' (offered: {})", name, known));
        return;
    }
    // The first session of a stage and size on this device times its candidates here,
    // within the tuner's budget; later ones read the choice.
    pipeline::SessionOptions options{recording_, config_.gpu.onchip_intermediates,
                                     tuner_ ? tuner_->choose(*definition, shape) : std::vector<pipeline::StageChoice>{},
                                     config_.limits.max_frame_pixels};
    auto session = pipeline::Session::open(gpu_, definition, shape, options);
    if (!session) {
        sendError(client.identity, request_id, fmt::format("pipeline '{}': {}", name, session.error().message));
        return;
    }

    const uint32_t id = client.next_session++;
    const pipeline::FrameShape out = (*session)->output();
    const std::string recording = gpu::recordingModeName((*session)->recording());
    client.sessions.emplace(id, SessionState{std::move(*session), recording, {}, 0});
    log::get("ipc")->info("client '{}': session {} of '{}' for {}", client.name, id, name, pipeline::describe(shape));

    framecl_frame_layout packed{};
    framecl_packed_layout(out.fourcc, out.width, out.height, &packed);
    flatbuffers::FlatBufferBuilder builder;
    std::vector<wire::Plane> planes;
    for (uint32_t p = 0; p < packed.num_planes; ++p)
        planes.emplace_back(packed.planes[p].offset, packed.planes[p].stride);
    auto layout = wire::CreateFrameLayoutDirect(builder, out.fourcc, out.width, out.height, &planes);
    send(client.identity,
         protocol::finishEnvelope(builder, wire::CreateSessionOpenedDirect(builder, request_id, id, layout, recording.c_str())));
}

void Server::onCloseSession(ClientState& client, const wire::CloseSession& request)
{
    if (!client.sessions.erase(request.session())) {
        sendError(client.identity, request.request_id(), fmt::format("no session {}", request.session()));
        return;
    }
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
            client.buffer_bytes -= it->second->size();
            client.buffers.erase(it); // a frame in flight keeps its own reference
        }
    }
    if (!unknown.empty()) {
        sendError(client.identity, request.request_id(), fmt::format("no buffer {}", fmt::join(unknown, ", ")));
        return;
    }
    sendAck(client.identity, request.request_id());
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
    json clients = json::array();
    for (const auto& [token, client] : clients_) {
        json import_paths = json::object();
        for (const auto& [id, buffer] : client.buffers)
            import_paths[memory::importPathName(buffer->path())] =
                import_paths.value(memory::importPathName(buffer->path()), 0) + 1;
        json sessions = json::array();
        for (const auto& [id, state] : client.sessions)
            sessions.push_back({{"id", id},
                                {"pipeline", state.session->pipelineName()},
                                {"recording", state.recording},
                                {"frames_done", state.counters.done},
                                {"frames_failed", state.counters.failed},
                                {"frames_busy", state.counters.busy},
                                {"frames_in_flight", state.in_flight}});
        json entry = {{"name", client.name},
                      {"buffers", client.buffers.size()},
                      {"bytes", client.buffer_bytes},
                      {"import_paths", import_paths},
                      {"sessions", sessions}};
        if (client.peer) {
            entry["pid"] = client.peer->pid;
            entry["uid"] = client.peer->uid;
        }
        clients.push_back(entry);
    }
    const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    json stats = {{"daemon", {{"version", FRAMECL_VERSION}, {"device", gpu_.capabilities().name}, {"uptime_s", uptime}}},
                  {"clients", clients},
                  {"released_on_disconnect",
                   {{"clients", released_.clients}, {"buffers", released_.buffers}, {"sessions", released_.sessions}}}};
    return stats.dump();
}

} // namespace framecl::ipc
