#include "daemon_connection.hpp"

#include "envelope.hpp"
#include "fd_passing.hpp"
#include "wire_messages.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>

namespace framecl::clientlib {

namespace {

// Long enough for a Goodbye to leave, short enough that closing never blocks for long.
constexpr int goodbye_linger_ms = 100;
// How often a connect to a buffer socket with a full listen backlog is tried again.
constexpr std::chrono::milliseconds backlog_retry{5};

Outcome<sockaddr_un> unixAddress(const std::string& path)
{
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path)
        return failure(
            ENAMETOOLONG,
            fmt::format("socket path {} is longer than the {} bytes a Unix socket address holds",
                        path, sizeof address.sun_path - 1));
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    return address;
}

// Connects a plain stream socket to `path` and closes it again. ZeroMQ retries a
// refused ipc:// connection silently in the background, so without this check a socket
// file left by a daemon that crashed, or one this user may not open, would cost the
// whole timeout and end in a message that does not say why.
Outcome<void> checkListening(const std::string& path)
{
    auto address = unixAddress(path);
    if (!address) return tl::unexpected(address.error());
    struct stat status;
    if (stat(path.c_str(), &status) != 0) {
        if (errno == ENOENT) return failure(ENOENT, fmt::format("no framecld socket at {}", path));
        return failure(errno, fmt::format("cannot reach the framecld socket {}: {}", path,
                                          std::strerror(errno)));
    }
    if (!S_ISSOCK(status.st_mode))
        return failure(ENOTSOCK, fmt::format("{} is not a socket", path));

    UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!probe.valid()) return failure(errno, fmt::format("socket: {}", std::strerror(errno)));
    // AF_UNIX connects at once or not at all; EAGAIN means a full backlog, so a listener.
    if (connect(probe.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof *address) == 0 ||
        errno == EAGAIN)
        return {};
    if (errno == ECONNREFUSED)
        return failure(
            ECONNREFUSED,
            fmt::format(
                "nothing listens at {}: framecld is not running (the socket file is left from an "
                "earlier run)",
                path));
    if (errno == EACCES)
        return failure(
            EACCES,
            fmt::format("no permission to connect to {}: the user must be in the socket's group "
                        "(daemon.socket_group)",
                        path));
    return failure(errno, fmt::format("cannot connect to {}: {}", path, std::strerror(errno)));
}

// Waits for `events` on `fd` until the deadline; the poll(2) revents, 0 on timeout.
short waitFor(int fd, short events, Deadline deadline)
{
    for (;;) {
        pollfd entry{fd, events, 0};
        const int ready = poll(&entry, 1, deadline.pollTimeout());
        if (ready > 0) return entry.revents;
        if (ready == 0 || errno != EINTR) return 0;
    }
}

} // namespace

DaemonConnection::DaemonConnection(zmq::context_t& context, const std::string& endpoint)
    : messages_(context, zmq::socket_type::dealer)
{
    messages_.set(zmq::sockopt::linger, goodbye_linger_ms);
    messages_.connect(endpoint);
    message_fd_ = messages_.get(zmq::sockopt::fd);
}

Outcome<std::unique_ptr<DaemonConnection>> DaemonConnection::open(zmq::context_t& context,
                                                                  const std::string& socket_path,
                                                                  const std::string& client_name,
                                                                  Deadline deadline, int timeout_ms)
{
    if (auto listening = checkListening(socket_path); !listening)
        return tl::unexpected(listening.error());
    try {
        std::unique_ptr<DaemonConnection> connection(
            new DaemonConnection(context, "ipc://" + socket_path));
        auto daemon = connection->hello(socket_path, client_name, deadline, timeout_ms);
        if (daemon) {
            connection->daemon_ = std::move(*daemon);
            auto bound = connection->connectBufferSocket(deadline);
            if (bound) return connection;
            daemon = tl::unexpected(bound.error());
        }
        // The daemon may have taken the Hello after all; Goodbye lets it forget us now
        // rather than after its idle timeout.
        connection->sayGoodbye();
        return tl::unexpected(daemon.error());
    } catch (const zmq::error_t& error) {
        return failure(error.num(), fmt::format("ZeroMQ: {}", error.what()));
    }
}

Outcome<DaemonInfo> DaemonConnection::hello(const std::string& socket_path,
                                            const std::string& client_name, Deadline deadline,
                                            int timeout_ms)
{
    flatbuffers::FlatBufferBuilder builder;
    if (auto sent = send(helloMessage(builder, client_name)); !sent)
        return tl::unexpected(sent.error());
    std::vector<uint8_t> aligned;
    for (;;) {
        while (auto received = receive()) {
            const wire::Envelope* envelope = protocol::verifiedEnvelope(received->bytes, aligned);
            if (!envelope) continue;
            if (const auto* error = envelope->message_as_ErrorReply())
                return failure(ECONNREFUSED,
                               fmt::format("framecld at {} refused the connection: {}", socket_path,
                                           text(error->message())));
            const auto* welcome = envelope->message_as_Welcome();
            if (!welcome) continue;
            if (welcome->protocol_version() != protocol::protocol_version)
                return failure(
                    EPROTO, fmt::format("framecld at {} speaks protocol version {}, libframecl {}",
                                        socket_path, welcome->protocol_version(),
                                        protocol::protocol_version));
            if (!welcome->token() || !welcome->buffer_socket())
                return failure(
                    EPROTO,
                    fmt::format("framecld at {} sent a Welcome without token or buffer_socket",
                                socket_path));
            DaemonInfo daemon{welcome->token()->str(),
                              text(welcome->daemon_version()),
                              text(welcome->device()),
                              welcome->buffer_socket()->str(),
                              {},
                              welcome->release_fences()};
            if (const auto* pipelines = welcome->pipelines()) {
                for (const auto* pipeline : *pipelines) {
                    PipelineInfo info{text(pipeline->name()), {}, text(pipeline->recording()), {}, {}};
                    if (const auto* stages = pipeline->stages())
                        for (const auto* stage : *stages)
                            info.stages.push_back(stage->str());
                    if (const auto* tuned = pipeline->tuned())
                        for (const auto* line : *tuned)
                            info.tuned.push_back(line->str());
                    if (const auto* fusion = pipeline->fusion())
                        for (const auto* line : *fusion)
                            info.fusion.push_back(line->str());
                    daemon.pipelines.push_back(std::move(info));
                }
            }
            return daemon;
        }
        if (deadline.expired())
            return failure(
                ETIMEDOUT,
                fmt::format("no answer from framecld at {} within {} ms — is it running?",
                            socket_path, timeout_ms));
        waitFor(message_fd_, POLLIN, deadline);
    }
}

Outcome<void> DaemonConnection::connectBufferSocket(Deadline deadline)
{
    const std::string& path = daemon_.buffer_socket;
    auto address = unixAddress(path);
    if (!address) return tl::unexpected(address.error());
    buffer_socket_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!buffer_socket_.valid())
        return failure(errno, fmt::format("socket: {}", std::strerror(errno)));
    while (connect(buffer_socket_.get(), reinterpret_cast<const sockaddr*>(&*address),
                   sizeof *address) != 0) {
        // A full listen backlog: AF_UNIX answers EAGAIN instead of completing later.
        if (errno == EAGAIN && !deadline.expired()) {
            std::this_thread::sleep_for(backlog_retry);
            continue;
        }
        return failure(errno, fmt::format("cannot connect to framecld's buffer socket {}: {}", path,
                                          std::strerror(errno)));
    }

    // An empty RegisterBuffers binds the connection to this client (its token).
    flatbuffers::FlatBufferBuilder builder;
    const Outcome<void> sent =
        sendRegistration(registerBuffersMessage(builder, daemon_.token, {}), {}, deadline);
    // framecld refuses a connection (SO_PEERCRED against daemon.allowed_users and
    // allowed_groups, an unknown token) with a reply whose result names no buffer (id 0),
    // and may close it before the packet above went out: read the reason even then.
    const auto reply =
        receiveBindingReply(sent ? deadline : Deadline::after(std::chrono::milliseconds(0)));
    if (reply) {
        const auto* results =
            wire::GetEnvelope(reply->data())->message_as_RegisterBuffersReply()->results();
        if (results && results->size() > 0 && results->Get(0)->error())
            return failure(ECONNREFUSED,
                           fmt::format("framecld refused its buffer socket {} to this client: {}",
                                       path, results->Get(0)->error()->str()));
        if (sent) return {};
    }
    const Failure& why = sent ? reply.error() : sent.error();
    if (why.error == daemon_gone)
        return failure(ECONNREFUSED,
                       fmt::format("framecld closed its buffer socket {} instead of binding it (is "
                                   "this user in daemon.allowed_users or daemon.allowed_groups?)",
                                   path));
    return tl::unexpected(why);
}

Outcome<void> DaemonConnection::send(std::span<const uint8_t> envelope)
{
    try {
        if (messages_.send(zmq::const_buffer(envelope.data(), envelope.size()),
                           zmq::send_flags::dontwait))
            return {};
        // EAGAIN: the queue towards the daemon is full (ZMQ_SNDHWM). The daemon is there
        // (its buffer socket is open) but does not read.
        return failure(EAGAIN, "framecld is not reading its socket; try again later");
    } catch (const zmq::error_t& error) {
        return failure(daemon_gone, fmt::format("sending to framecld: {}", error.what()));
    }
}

Outcome<void> DaemonConnection::sendFrame(std::span<const uint8_t> envelope, std::span<const int> fds)
{
    const int err = protocol::sendPacketOnce(buffer_socket_.get(), envelope, fds, MSG_DONTWAIT);
    if (err == 0) return {};
    // The daemon's queue from this client is full: it is there but does not read.
    if (err == -EAGAIN || err == -EWOULDBLOCK)
        return failure(EAGAIN, "framecld is not reading its buffer socket; try again later");
    // An fd the kernel will not pass (closed, or not ours): the caller's mistake.
    if (err == -EBADF) return failure(EBADF, "the acquire fence is not an open file descriptor");
    return failure(daemon_gone, fmt::format("buffer socket: {}", std::strerror(-err)));
}

std::optional<Received> DaemonConnection::receive()
{
    // Not yet connected while Hello waits for its Welcome.
    for (int failed = 0; buffer_socket_.valid() && !buffer_socket_closed_ && failed < 2;) {
        auto packet = protocol::receivePacket(buffer_socket_.get());
        // A failed read is a packet cut short, ignored like any malformed message, or
        // the ECONNRESET of a daemon that closed with a packet of ours unread, reported
        // once before what it sent can still be read: either way, read on, a little.
        if (!packet) {
            ++failed;
            continue;
        }
        if (packet->none) break;
        if (packet->closed) {
            buffer_socket_closed_ = true;
            break;
        }
        return Received{std::move(packet->bytes), std::move(packet->fds)};
    }
    if (!(messages_.get(zmq::sockopt::events) & ZMQ_POLLIN)) return std::nullopt;
    // Copied out of ZeroMQ: the Envelope then has an owner that outlives the message,
    // and a start aligned for its 64-bit fields.
    std::vector<uint8_t> bytes;
    zmq::message_t part;
    do {
        if (!messages_.recv(part, zmq::recv_flags::dontwait)) return std::nullopt;
        bytes.assign(part.data<uint8_t>(), part.data<uint8_t>() + part.size());
    } while (part.more());
    return Received{std::move(bytes), {}};
}

Outcome<void> DaemonConnection::sendRegistration(std::span<const uint8_t> envelope,
                                                 std::span<const int> fds, Deadline deadline)
{
    const int fd = buffer_socket_.get();
    const short writable = waitFor(fd, POLLOUT, deadline);
    if (writable & (POLLHUP | POLLERR))
        return failure(daemon_gone, "framecld closed its buffer socket");
    if (!writable)
        return failure(ETIMEDOUT, fmt::format("framecld does not read its buffer socket {}",
                                              daemon_.buffer_socket));
    if (auto sent = protocol::sendPacket(fd, envelope, fds); !sent)
        return failure(daemon_gone, fmt::format("buffer socket: {}", sent.error().message));
    return {};
}

Outcome<std::vector<uint8_t>> DaemonConnection::receiveBindingReply(Deadline deadline)
{
    const int fd = buffer_socket_.get();
    for (;;) {
        const short readable = waitFor(fd, POLLIN, deadline);
        if (!readable)
            return failure(ETIMEDOUT, fmt::format("no answer from framecld on its buffer socket {}",
                                                  daemon_.buffer_socket));
        auto packet = protocol::receivePacket(fd);
        if (packet && packet->closed)
            return failure(daemon_gone, "framecld closed its buffer socket");
        // A failed read: see receive().
        if (!packet) continue;
        std::vector<uint8_t> aligned;
        const wire::Envelope* reply = protocol::verifiedEnvelope(packet->bytes, aligned);
        if (reply && reply->message_as_RegisterBuffersReply())
            return std::move(packet->bytes);
    }
}

bool DaemonConnection::alive()
{
    if (buffer_socket_closed_) return false;
    // Peeked, not read: what the daemon sent is receive()'s. 0 bytes is the end of the
    // connection; ECONNRESET a daemon that closed it with a packet of ours unread.
    char byte;
    const ssize_t peeked = recv(buffer_socket_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (peeked == 0) return false;
    return peeked > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void DaemonConnection::wait(Deadline deadline) const
{
    pollfd entries[] = {{message_fd_, POLLIN, 0}, {buffer_socket_.get(), POLLIN, 0}};
    // EINTR, like any wakeup, sends the caller round its loop to look again.
    poll(entries, 2, deadline.pollTimeout());
}

void DaemonConnection::sayGoodbye()
{
    flatbuffers::FlatBufferBuilder builder;
    // Best effort: a daemon that cannot take it forgets the client anyway.
    (void)send(goodbyeMessage(builder));
}

void DaemonConnection::abandon()
{
    messages_.set(zmq::sockopt::linger, 0);
}

} // namespace framecl::clientlib
