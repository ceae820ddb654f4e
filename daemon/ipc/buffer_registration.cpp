// The buffer socket: who may connect, which client a connection belongs to,
// RegisterBuffers with its fds, and the frames' Submits (frames.cpp answers them).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "envelope.hpp"
#include "fd_passing.hpp"
#include "ipc/client_text.hpp"
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
    auto logger = log::get("ipc");
    for (;;) {
        UniqueFd connection(accept4(buffer_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!connection.valid()) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE) {
                if (shedBufferConnection())
                    continue;
                // Not even the spare fd could be had back: stop listening until the
                // housekeeping timer tries again, rather than spin on the listener.
                loop_.unwatch(buffer_listener_.get());
                listener_paused_ = true;
                logger->warn("buffer socket: out of file descriptors and no spare: not accepting for {} s",
                             housekeeping_period.count());
                return;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                logger->warn("buffer socket: accept: {}", std::strerror(errno));
            return; // EAGAIN: no more waiting
        }
        ucred peer{};
        socklen_t length = sizeof peer;
        if (getsockopt(connection.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
            unauthenticated_events_.note("buffer socket: connections closed whose peer's credentials could not be read",
                                         "buffer socket: cannot read the peer's credentials; connection closed");
            continue;
        }
        if (auto allowed = access_.check(peer); !allowed) {
            unauthenticated_events_.note("buffer socket: connections refused by daemon.allowed_users and allowed_groups",
                                         fmt::format("buffer socket: refused {}", allowed.error().message));
            refuseBufferConnection(connection.get(), "refused: " + allowed.error().message);
            continue;
        }
        // Each connection holds an fd until its first RegisterBuffers binds it to a
        // client: as many may wait as there may be clients, each for a short while. A
        // real client binds within milliseconds of connecting, so when they are all
        // taken the one that has waited longest gives way.
        if (unbound_connections_.size() >= config_.limits.max_clients) {
            const auto oldest = std::min_element(unbound_connections_.begin(), unbound_connections_.end(),
                                                 [](const auto& a, const auto& b) {
                                                     return a.second.accepted < b.second.accepted;
                                                 });
            unauthenticated_events_.note("buffer socket: connections closed for sending no RegisterBuffers while "
                                         "others waited",
                                         fmt::format("buffer socket: closed a connection that sent no RegisterBuffers: "
                                                     "{} were waiting",
                                                     unbound_connections_.size()));
            refuseBufferConnection(oldest->first,
                                   fmt::format("closed: it sent no RegisterBuffers while {} connections waited "
                                               "(limits.max_clients)",
                                               unbound_connections_.size()));
            closeBufferConnection(oldest->first);
        }
        const int fd = connection.get();
        unbound_connections_.emplace(fd, UnboundConnection{std::move(connection), std::chrono::steady_clock::now()});
        watch(fd, [this, fd] { onBufferPacket(fd); });
    }
}

bool Server::shedBufferConnection()
{
    // Out of fds, the listener stays readable and the loop would spin on it. The spare
    // fd kept for this moment makes room to take the connection and close it with the
    // reason, so the client hears why and the listener drains.
    ++connections_shed_;
    if (connections_shed_ == 1 || connections_shed_ % 100 == 0)
        log::get("ipc")->warn("buffer socket: out of file descriptors ({}): {} connections refused so far; see "
                              "limits.max_clients and LimitNOFILE=",
                              std::strerror(errno), connections_shed_);
    if (!spare_fd_.valid())
        return false;
    spare_fd_.reset();
    bool shed = false;
    {
        UniqueFd connection(accept4(buffer_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (connection.valid())
            refuseBufferConnection(connection.get(), "refused: framecld has no file descriptor left (RLIMIT_NOFILE)");
        shed = connection.valid();
    }
    spare_fd_.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
    return shed;
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
    if (packet && packet->none)
        return;
    if (packet && packet->closed) {
        closeBufferConnection(fd);
        return;
    }
    if (!packet) {
        unauthenticated_events_.note("buffer socket: connections closed for a packet framecld cannot read",
                                     fmt::format("buffer socket: {}; connection closed", packet.error().message));
        closeBufferConnection(fd);
        return;
    }

    const wire::Envelope* envelope = protocol::verifiedEnvelope(packet->bytes, aligned_message_);
    if (const wire::Submit* submit = envelope ? envelope->message_as_Submit() : nullptr) {
        if (ClientState* client = clientByConnection(fd)) {
            const log::ScopedFields about({client->name, {}, {}});
            onSubmit(*client, *submit, packet->fds, packet->fds_lost);
        } else {
            refuseBufferConnection(fd, "bind the connection first: RegisterBuffers with the Welcome's token");
        }
        return;
    }
    const wire::RegisterBuffers* request = envelope ? envelope->message_as_RegisterBuffers() : nullptr;
    if (!request || !request->token()) {
        refuseBufferConnection(fd, "the buffer socket takes RegisterBuffers messages with a token, and Submits");
        return; // the fds in the packet close with it
    }
    if (auto valid = checkClientText(request->token()->string_view(), "RegisterBuffers.token", max_token_bytes);
        !valid) {
        refuseBufferConnection(fd, valid.error().message);
        return;
    }

    // The first RegisterBuffers binds the connection to the client its token names.
    ClientState* client = clientByConnection(fd);
    if (!client) {
        client = bindClient(fd, request->token()->string_view());
        if (!client)
            return;
    } else if (client->token != request->token()->str()) {
        refuseBufferConnection(fd, "a connection's RegisterBuffers must all carry the token it was bound with");
        return;
    }
    const log::ScopedFields about({client->name, {}, {}});

    flatbuffers::FlatBufferBuilder reply;
    registerBuffers(*client, *request, packet->fds, packet->fds_lost, reply);
    if (auto sent = protocol::sendPacket(fd, {reply.GetBufferPointer(), reply.GetSize()}); !sent)
        log::get("ipc")->debug("buffer socket: reply not sent: {}", sent.error().message);
}

ClientState* Server::bindClient(int fd, std::string_view token)
{
    const auto now = std::chrono::steady_clock::now();
    auto claims = tokens_.verify(token, now, token_lifetime);
    std::string refusal;
    if (!claims)
        refusal = claims.error().message;
    else if (clients_.count(std::string(token)) || clientByIdentity(claims->identity))
        refusal = "this client's buffer socket is already connected";
    else if (spent_tokens_.count(std::string(token)))
        refusal = "this Welcome's token was used already: say Hello again";
    else if (clients_.size() >= config_.limits.max_clients)
        refusal = fmt::format("framecld serves limits.max_clients = {} clients already", config_.limits.max_clients);
    if (!refusal.empty()) {
        refuseBufferConnection(fd, refusal);
        closeBufferConnection(fd);
        return nullptr;
    }
    ClientState client;
    client.id = next_client_id_++;
    client.token = std::string(token);
    client.identity = std::move(claims->identity);
    client.name = std::move(claims->name);
    ucred peer{};
    socklen_t length = sizeof peer;
    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length);
    client.peer = peer;
    assignClass(client); // by its name, uid or gid
    client.buffer_connection = std::move(unbound_connections_.at(fd).connection);
    unbound_connections_.erase(fd);
    spent_tokens_.emplace(client.token, claims->issued);
    const log::ScopedFields about({client.name, {}, {}});
    log::get("ipc")->info("client '{}' connected ({} clients){}", client.name, clients_.size() + 1,
                          client.client_class.empty() ? "" : fmt::format(", class '{}'", client.client_class));
    return &clients_.emplace(client.token, std::move(client)).first->second;
}

void Server::registerBuffers(ClientState& client, const wire::RegisterBuffers& request, std::vector<UniqueFd>& fds,
                             const std::string& fds_lost, flatbuffers::FlatBufferBuilder& reply)
{
    auto logger = log::get("ipc");
    const auto* registrations = request.buffers();
    const size_t count = registrations ? registrations->size() : 0;
    std::vector<flatbuffers::Offset<wire::BufferResult>> results;
    retireUnused(client);

    const auto refuse = [&](uint32_t id, const std::string& error) {
        logger->info("client '{}': buffer {} refused: {}", client.name, id, error);
        results.push_back(wire::CreateBufferResultDirect(reply, id, error.c_str(), nullptr));
    };

    for (size_t i = 0; i < count; ++i) {
        const auto* registration = registrations->Get(i);
        const uint32_t id = registration->id();
        if (!fds_lost.empty()) {
            refuse(id, fds_lost);
            continue;
        }
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
        // The size is known from the fd before anything is mapped or imported: a huge
        // sparse memfd is refused without being touched.
        const framecl_frame_layout layout = layoutFrom(registration->layout());
        const auto checked = memory::validateBufferFd(fds[i].get(), layout, config_.limits.max_frame_pixels);
        if (!checked) {
            refuse(id, checked.error().message);
            continue;
        }
        if (client.buffer_bytes + client.session_bytes + checked->size > config_.limits.max_bytes_per_client) {
            refuse(id, fmt::format("{} more bytes would pass limits.max_bytes_per_client = {} ({} held in buffers, {} "
                                   "in sessions)",
                                   checked->size, config_.limits.max_bytes_per_client, client.buffer_bytes,
                                   client.session_bytes));
            continue;
        }
        auto imported = memory::importBuffer(gpu_, std::move(fds[i]), layout, config_.limits.max_frame_pixels);
        if (!imported) {
            refuse(id, imported.error().message);
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
