// The buffer socket: who may connect, which client a connection belongs to, and
// RegisterBuffers with its fds.
#include <sys/socket.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "envelope.hpp"
#include "fd_passing.hpp"
#include "ipc/server.hpp"

namespace framecl::ipc {
namespace {

framecl_frame_layout layoutFrom(const wire::FrameLayout* wire_layout)
{
    framecl_frame_layout layout{};
    if (!wire_layout)
        return layout;
    layout.fourcc = wire_layout->fourcc();
    layout.width = wire_layout->width();
    layout.height = wire_layout->height();
    if (const auto* planes = wire_layout->planes()) {
        // More planes than any format has makes the layout invalid, as it should.
        layout.num_planes = planes->size();
        for (uint32_t p = 0; p < planes->size() && p < FRAMECL_MAX_PLANES; ++p)
            layout.planes[p] = {planes->Get(p)->offset(), planes->Get(p)->stride()};
    }
    return layout;
}

} // namespace

void Server::acceptBufferConnection()
{
    for (;;) {
        UniqueFd connection(accept4(buffer_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!connection.valid())
            return; // EAGAIN: no more waiting
        ucred peer{};
        socklen_t length = sizeof peer;
        if (getsockopt(connection.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
            log::get("ipc")->warn("buffer socket: cannot read the peer's credentials; connection closed");
            continue;
        }
        if (auto allowed = access_.check(peer); !allowed) {
            log::get("ipc")->warn("buffer socket: refused {}", allowed.error().message);
            refuseBufferConnection(connection.get(), "refused: " + allowed.error().message);
            continue;
        }
        const int fd = connection.get();
        unbound_connections_.emplace(fd, std::move(connection));
        loop_.watch(fd, [this, fd] { onBufferPacket(fd); });
    }
}

void Server::refuseBufferConnection(int fd, const std::string& reason)
{
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<wire::BufferResult>> results{
        wire::CreateBufferResultDirect(builder, 0, reason.c_str(), nullptr)};
    [[maybe_unused]] auto sent =
        protocol::sendPacket(fd, protocol::finishEnvelope(builder, wire::CreateRegisterBuffersReplyDirect(builder, &results)));
}

void Server::closeBufferConnection(int fd)
{
    loop_.unwatch(fd);
    if (unbound_connections_.erase(fd))
        return;
    if (ClientState* client = clientByConnection(fd))
        dropClient(client->token, true);
}

void Server::onBufferPacket(int fd)
{
    auto packet = protocol::receivePacket(fd);
    if (packet && packet->closed) {
        closeBufferConnection(fd);
        return;
    }
    if (!packet) {
        log::get("ipc")->warn("buffer socket: {}; connection closed", packet.error().message);
        closeBufferConnection(fd);
        return;
    }

    const wire::Envelope* envelope = protocol::verifiedEnvelope(packet->bytes);
    const wire::RegisterBuffers* request = envelope ? envelope->message_as_RegisterBuffers() : nullptr;
    if (!request || !request->token()) {
        refuseBufferConnection(fd, "the buffer socket takes RegisterBuffers messages with a token only");
        return; // the fds in the packet close with it
    }

    // The first RegisterBuffers binds the connection to the client its token names.
    ClientState* client = clientByConnection(fd);
    if (!client) {
        client = clientByToken(request->token()->str());
        if (!client || client->buffer_connection.valid()) {
            refuseBufferConnection(fd, client ? "this client's buffer socket is already connected"
                                              : "unknown token: say Hello on the ZeroMQ socket first");
            return;
        }
        ucred peer{};
        socklen_t length = sizeof peer;
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length);
        client->peer = peer;
        assignClass(*client); // a class may match its uid or gid
        client->buffer_connection = std::move(unbound_connections_.at(fd));
        unbound_connections_.erase(fd);
    } else if (client->token != request->token()->str()) {
        refuseBufferConnection(fd, "a connection's RegisterBuffers must all carry the token it was bound with");
        return;
    }
    client->last_seen = std::chrono::steady_clock::now();

    flatbuffers::FlatBufferBuilder reply;
    registerBuffers(*client, *request, packet->fds, reply);
    if (auto sent = protocol::sendPacket(fd, {reply.GetBufferPointer(), reply.GetSize()}); !sent)
        log::get("ipc")->debug("buffer socket: reply not sent: {}", sent.error().message);
}

void Server::registerBuffers(ClientState& client, const wire::RegisterBuffers& request, std::vector<UniqueFd>& fds,
                             flatbuffers::FlatBufferBuilder& reply)
{
    auto logger = log::get("ipc");
    const auto* registrations = request.buffers();
    const size_t count = registrations ? registrations->size() : 0;
    std::vector<flatbuffers::Offset<wire::BufferResult>> results;

    const auto refuse = [&](uint32_t id, const std::string& error) {
        logger->info("client '{}': buffer {} refused: {}", client.name, id, error);
        results.push_back(wire::CreateBufferResultDirect(reply, id, error.c_str(), nullptr));
    };

    for (size_t i = 0; i < count; ++i) {
        const auto* registration = registrations->Get(i);
        const uint32_t id = registration->id();
        if (fds.size() != count) {
            refuse(id, fmt::format("the packet carried {} fds for {} buffers", fds.size(), count));
            continue;
        }
        if (client.buffers.count(id)) {
            refuse(id, fmt::format("buffer id {} is already registered", id));
            continue;
        }
        if (client.buffers.size() >= config_.limits.max_buffers_per_client) {
            refuse(id, fmt::format("limits.max_buffers_per_client = {} reached", config_.limits.max_buffers_per_client));
            continue;
        }
        auto imported = memory::importBuffer(gpu_, std::move(fds[i]), layoutFrom(registration->layout()),
                                             config_.limits.max_frame_pixels);
        if (!imported) {
            refuse(id, imported.error().message);
            continue;
        }
        if (client.buffer_bytes + (*imported)->size() > config_.limits.max_bytes_per_client) {
            refuse(id, fmt::format("{} more bytes would pass limits.max_bytes_per_client = {}", (*imported)->size(),
                                   config_.limits.max_bytes_per_client));
            continue;
        }
        client.buffer_bytes += (*imported)->size();
        const char* path = memory::importPathName((*imported)->path());
        client.buffers.emplace(id, std::move(*imported));
        results.push_back(wire::CreateBufferResultDirect(reply, id, nullptr, path));
    }
    protocol::finishEnvelope(reply, wire::CreateRegisterBuffersReplyDirect(reply, &results));
}

} // namespace framecl::ipc
