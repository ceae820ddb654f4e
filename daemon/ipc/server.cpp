// Sockets, routing and client lifetime. Requests are in client_requests.cpp, buffer
// registration in buffer_registration.cpp, frames in frames.cpp.
#include "ipc/server.hpp"

#include <cstring>

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "envelope.hpp"
#include "framecl_build_config.h"
#include "gpu/cl_error.hpp"
#include "ipc/client_text.hpp"
#include "ipc/socket_files.hpp"
#include "memory/sync_file.hpp"
#include "pipeline/fusion.hpp"
#include "service/open_file_limit.hpp"

namespace framecl::ipc {
namespace {

// ZeroMQ drops larger messages: no request needs more.
constexpr int64_t max_message_bytes = 64 * 1024;
// Requests handled in one turn of the event loop, at most: enough to keep up with
// every client's Submits, few enough that timers and completions are heard between.
constexpr size_t max_messages_per_wakeup = 64;
constexpr auto message_time_per_wakeup = std::chrono::milliseconds(20);
// A buffer-socket connection that sent no RegisterBuffers by then is closed: a client
// binds its connection as soon as it is made.
constexpr auto unbound_connection_expiry = std::chrono::seconds(10);

} // namespace

Server::Server(const config::Config& config, const gpu::GpuContext& gpu, pipeline::Catalog catalog,
               service::ServiceLoop& loop, PeerAccess access, WelcomeTokens tokens, std::filesystem::path framecld)
    : config_(config), gpu_(gpu), loop_(loop), access_(std::move(access)), tokens_(std::move(tokens)),
      catalog_(std::move(catalog)), framecld_(std::move(framecld)),
      zmq_context_(1), router_(zmq_context_, zmq::socket_type::router),
      preparer_(gpu),
      scheduler_(gpu, config.gpu,
                 {[this](const scheduler::FrameEnd& end) { frameEnded(end); },
                  [this](const std::string& reason) { gpuLost(reason); }}),
      started_(std::chrono::steady_clock::now())
{
    std::string why;
    recording_ = gpu::chooseRecordingMode(gpu.capabilities(), gpu.vendor(), config.gpu.recording, &why);
    log::get("pipeline")->info("recording: {}{}", gpu::recordingModeName(recording_), why.empty() ? "" : " (" + why + ")");
    if (std::string why = memory::implicitSyncUnavailable(); !why.empty())
        turnImplicitSyncOff(why);
    else
        log::get("ipc")->info("implicit sync: a frame starts once the fences on its dma-bufs have signalled");
    if (auto fences = gpu::ReleaseFences::open(gpu)) {
        release_fences_ = std::move(*fences);
        log::get("ipc")->info("release fences: offered (cl_khr_external_semaphore_sync_fd)");
    } else {
        release_fences_off_ = fences.error().message;
        log::get("ipc")->info("release fences: not offered: {}", release_fences_off_);
    }
    setUpTuner();
}

void Server::setUpTuner()
{
    if (config_.gpu.tuning == config::Tuning::Off)
        tuner_.reset();
    else if (!tuner_ || tuner_cache_dir_ != config_.daemon.cache_dir ||
             tuner_budget_ms_ != config_.gpu.tuning_budget_ms || tuner_kernel_budget_ms_ != config_.gpu.kernel_budget_ms)
    {
        const std::chrono::milliseconds budget(config_.gpu.tuning_budget_ms);
        std::shared_ptr<const pipeline::CompileAhead> compile_ahead;
        if (!framecld_.empty() && gpu_.capabilities().compiles_at_first_launch)
            compile_ahead = std::make_shared<pipeline::CompileAhead>(framecld_, config_.file, budget);
        tuner_ = std::make_shared<pipeline::Tuner>(gpu_, config_.daemon.cache_dir, budget,
                                                   uint64_t(config_.gpu.kernel_budget_ms * 1e6),
                                                   std::move(compile_ahead));
    }
    tuner_cache_dir_ = config_.daemon.cache_dir;
    tuner_budget_ms_ = config_.gpu.tuning_budget_ms;
    tuner_kernel_budget_ms_ = config_.gpu.kernel_budget_ms;
}

Result<std::unique_ptr<Server>> Server::start(const config::Config& config, const gpu::GpuContext& gpu,
                                              pipeline::Catalog catalog, service::ServiceLoop& loop,
                                              service::ActivatedSockets activated, std::filesystem::path framecld)
{
    auto access = PeerAccess::fromConfig(config.daemon);
    if (!access)
        return tl::unexpected(access.error());
    auto tokens = WelcomeTokens::create();
    if (!tokens)
        return tl::unexpected(tokens.error());
    std::unique_ptr<Server> server(
        new Server(config, gpu, std::move(catalog), loop, std::move(*access), std::move(*tokens), std::move(framecld)));
    server->raiseFileLimit();
    if (auto bound = server->bind(std::move(activated)); !bound)
        return tl::unexpected(bound.error());
    return server;
}

void Server::raiseFileLimit()
{
    // Each client's buffers, its buffer connection, as many unbound connections, the
    // fences of its frames in flight (three each) and of its held Submits (one each), and
    // the daemon's own: sockets, timers, the driver's files, the spare.
    constexpr uint64_t daemon_fds = 256;
    const auto& limits = config_.limits;
    const uint64_t wanted =
        uint64_t(limits.max_clients) * (limits.max_buffers_per_client + 2 + 4 * limits.max_inflight_per_client) +
        daemon_fds;
    const auto raised = service::raiseOpenFileLimit(wanted);
    if (!raised)
        log::get("ipc")->warn("{}", raised.error().message);
    else if (*raised < wanted)
        log::get("ipc")->warn("RLIMIT_NOFILE is {} (the hard limit), below the {} file descriptors that limits.max_clients "
                              "and limits.max_buffers_per_client allow: raise LimitNOFILE= or lower the limits",
                              *raised, wanted);
    if (!spare_fd_.valid())
        spare_fd_.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
}

// A socket file this process just bound: removed at exit (if it is still the same
// file), and opened to daemon.socket_group.
Result<void> Server::adoptSocketFile(const std::filesystem::path& path)
{
    auto bound = identifyBoundSocket(path);
    if (!bound)
        return tl::unexpected(bound.error());
    bound_sockets_.push_back(std::move(*bound));
    return setSocketAccess(path, config_.daemon.socket_group);
}

Result<void> Server::bind(service::ActivatedSockets activated)
{
    const auto& daemon = config_.daemon;
    router_.set(zmq::sockopt::maxmsgsize, max_message_bytes);
    router_.set(zmq::sockopt::linger, 0);
    if (activated.control.valid()) {
        // ZeroMQ listens on the passed socket (and closes it) rather than making one.
        router_.set(zmq::sockopt::use_fd, activated.control.release());
        try {
            router_.bind("ipc://" + daemon.socket.string());
        } catch (const zmq::error_t& e) {
            return fail(fmt::format("{}: cannot listen on the socket from the service manager: {}",
                                    daemon.socket.string(), e.what()));
        }
    } else {
        if (auto ready = prepareSocketPath(daemon.socket, SOCK_STREAM); !ready)
            return ready;
        // Created with no access for others, then opened to the group: never a moment
        // where the socket is wider open than configured.
        const mode_t old_mask = umask(0177);
        try {
            router_.bind("ipc://" + daemon.socket.string());
        } catch (const zmq::error_t& e) {
            umask(old_mask);
            return fail(fmt::format("{}: cannot listen: {}", daemon.socket.string(), e.what()));
        }
        umask(old_mask);
        if (auto made = adoptSocketFile(daemon.socket); !made)
            return made;
    }

    if (activated.buffers.valid()) {
        buffer_listener_ = std::move(activated.buffers);
    } else {
        if (auto ready = prepareSocketPath(daemon.buffer_socket, SOCK_SEQPACKET); !ready)
            return ready;
        buffer_listener_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, daemon.buffer_socket.c_str(), sizeof address.sun_path - 1);
        const mode_t old_mask = umask(0177);
        const bool listening = buffer_listener_.valid() &&
                               ::bind(buffer_listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                               listen(buffer_listener_.get(), 16) == 0;
        const int bind_errno = errno;
        umask(old_mask);
        if (!listening)
            return fail(fmt::format("{}: cannot listen: {}", daemon.buffer_socket.string(), std::strerror(bind_errno)));
        if (auto made = adoptSocketFile(daemon.buffer_socket); !made)
            return made;
    }

    loop_.watch(router_.get(zmq::sockopt::fd), [this] { drainMessages(); });
    more_messages_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!more_messages_.valid())
        return fail(fmt::format("eventfd: {}", std::strerror(errno)));
    loop_.watch(more_messages_.get(), [this] {
        uint64_t count = 0;
        [[maybe_unused]] ssize_t got = read(more_messages_.get(), &count, sizeof count);
        drainMessages();
    });
    watch(buffer_listener_.get(), [this] { acceptBufferConnection(); });
    watch(scheduler_.completionFd(), [this] { onCompletions(); });
    watch(preparer_.fd(), [this] { onSessionsPrepared(); });

    housekeeping_timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    const itimerspec period{{housekeeping_period.count(), 0}, {housekeeping_period.count(), 0}};
    timerfd_settime(housekeeping_timer_.get(), 0, &period, nullptr);
    watch(housekeeping_timer_.get(), [this] { housekeeping(); });
    scheduler_timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    watch(scheduler_timer_.get(), [this] { onSchedulerTimer(); });
    armSchedulerTimer(); // the perf hint goes idle even if no frame ever comes

    log::get("ipc")->info("listening on ipc://{} (buffers: {})", daemon.socket.string(), daemon.buffer_socket.string());
    return {};
}

Server::~Server()
{
    loop_.unwatch(router_.get(zmq::sockopt::fd));
    loop_.unwatch(more_messages_.get());
    loop_.unwatch(buffer_listener_.get());
    loop_.unwatch(scheduler_.completionFd());
    loop_.unwatch(preparer_.fd());
    loop_.unwatch(housekeeping_timer_.get());
    loop_.unwatch(scheduler_timer_.get());
    for (auto& [fd, unbound] : unbound_connections_)
        loop_.unwatch(fd);
    for (auto& [token, client] : clients_)
        if (client.buffer_connection.valid())
            loop_.unwatch(client.buffer_connection.get());
    router_.close();
    for (const BoundSocketFile& bound : bound_sockets_)
        removeBoundSocket(bound);
}

Result<void> Server::reload(const config::Config& config, pipeline::Catalog catalog)
{
    auto access = PeerAccess::fromConfig(config.daemon);
    if (!access)
        return tl::unexpected(access.error());
    if (config.daemon.socket != config_.daemon.socket || config.daemon.buffer_socket != config_.daemon.buffer_socket)
        log::get("ipc")->warn("reload: a change of daemon.socket or daemon.buffer_socket takes effect on restart");
    const auto sockets = std::make_pair(config_.daemon.socket, config_.daemon.buffer_socket);
    config_ = config;
    std::tie(config_.daemon.socket, config_.daemon.buffer_socket) = sockets;
    access_ = std::move(*access);
    catalog_ = std::move(catalog);
    raiseFileLimit();
    std::string why;
    recording_ = gpu::chooseRecordingMode(gpu_.capabilities(), gpu_.vendor(), config_.gpu.recording, &why);
    setUpTuner();
    scheduler_.reconfigure(config_.gpu);
    for (auto& [token, client] : clients_)
        assignClass(client);
    armSchedulerTimer();
    return {};
}

void Server::watch(int fd, std::function<void()> handler)
{
    // Any handler may send on the ZeroMQ socket (a Done, a trace), and a send can take
    // the edge ZMQ_FD would have signalled a request with (zmq_getsockopt(3), ZMQ_FD):
    // look for requests after each one, or they could sit unread until the next.
    loop_.watch(fd, [this, handler = std::move(handler)] {
        handler();
        drainMessages();
    });
}

void Server::drainMessages()
{
    // ZMQ_FD only signals that the socket's state may have changed: keep reading until
    // ZMQ_EVENTS says nothing is left, or a message could sit unseen. But not for
    // ever: an OpenSession may tune for seconds, and a pass that took every queued
    // one would keep the loop from the watchdog, timers and GPU completions. Past the
    // limits the rest wait for the next turn of the loop, which more_messages_ asks for.
    const auto started = std::chrono::steady_clock::now();
    for (size_t handled = 0; router_.get(zmq::sockopt::events) & ZMQ_POLLIN; ++handled) {
        if (handled == max_messages_per_wakeup || std::chrono::steady_clock::now() - started > message_time_per_wakeup) {
            const uint64_t one = 1;
            [[maybe_unused]] ssize_t written = write(more_messages_.get(), &one, sizeof one);
            return;
        }
        std::vector<zmq::message_t> parts;
        if (!zmq::recv_multipart(router_, std::back_inserter(parts), zmq::recv_flags::dontwait))
            break;
        if (parts.size() != 2) {
            log::get("ipc")->debug("dropped a message of {} parts (expected identity and body)", parts.size());
            continue;
        }
        handleMessage(parts[0].to_string(), {parts[1].data<uint8_t>(), parts[1].size()});
    }
}

void Server::send(const std::string& identity, std::span<const uint8_t> bytes)
{
    try {
        router_.send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
        router_.send(zmq::buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
        log::get("ipc")->debug("send to a client failed: {}", e.what());
    }
}

void Server::sendError(const std::string& identity, uint32_t request_id, const std::string& message)
{
    log::get("ipc")->debug("error reply: {}", message);
    flatbuffers::FlatBufferBuilder builder;
    send(identity, protocol::finishEnvelope(builder, wire::CreateErrorReplyDirect(builder, request_id, message.c_str())));
}

void Server::sendAck(const std::string& identity, uint32_t request_id)
{
    flatbuffers::FlatBufferBuilder builder;
    send(identity, protocol::finishEnvelope(builder, wire::CreateAck(builder, request_id)));
}

void Server::handleMessage(const std::string& identity, std::span<const uint8_t> bytes)
{
    const wire::Envelope* envelope = protocol::verifiedEnvelope(bytes, aligned_message_);
    if (!envelope) {
        sendError(identity, 0, fmt::format("malformed message ({} bytes): not a framecl Envelope", bytes.size()));
        return;
    }
    // A verified Envelope may name a message type and carry no table; every message has
    // fields (the server-message fuzzer sent a CloseSession without any).
    if (!envelope->message()) {
        sendError(identity, 0,
                  fmt::format("malformed message: a {} without its fields", wire::EnumNameMessage(envelope->message_type())));
        return;
    }
    if (const auto* hello = envelope->message_as_Hello()) {
        onHello(identity, *hello);
        return;
    }
    // daemon.allowed_users and allowed_groups are checked where the peer is known, on
    // the buffer socket: a client exists for framecld once that is bound. A Goodbye
    // before then has nothing to end.
    ClientState* client = clientByIdentity(identity);
    if (!client) {
        if (envelope->message_type() != wire::Message::Goodbye)
            sendError(identity, 0,
                      "unknown client: say Hello first, then bind the buffer socket with the Welcome's token; "
                      "framecld answers nothing but Hello until then");
        return;
    }
    const log::ScopedFields about({client->name, {}, {}});
    switch (envelope->message_type()) {
    case wire::Message::OpenSession:
        onOpenSession(*client, *envelope->message_as_OpenSession());
        break;
    case wire::Message::CloseSession:
        onCloseSession(*client, *envelope->message_as_CloseSession());
        break;
    case wire::Message::ReleaseBuffers:
        onReleaseBuffers(*client, *envelope->message_as_ReleaseBuffers());
        break;
    case wire::Message::StatsRequest:
        onStats(*client, *envelope->message_as_StatsRequest());
        break;
    case wire::Message::TraceRequest:
        onTrace(*client, *envelope->message_as_TraceRequest());
        break;
    case wire::Message::Goodbye:
        dropClient(client->token, false);
        break;
    case wire::Message::Submit:
        sendError(identity, 0, "Submit goes on the buffer socket, not the ZeroMQ socket");
        break;
    default:
        sendError(identity, 0,
                  fmt::format("{} is not a request a client may send", wire::EnumNameMessage(envelope->message_type())));
    }
}

void Server::onHello(const std::string& identity, const wire::Hello& hello)
{
    auto logger = log::get("ipc");
    if (hello.protocol_version() != protocol::protocol_version) {
        sendError(identity, 0, fmt::format("protocol version {} is not supported; this framecld speaks version {}",
                                           hello.protocol_version(), protocol::protocol_version));
        return;
    }
    if (clientByIdentity(identity)) {
        sendError(identity, 0, "Hello was already said on this connection");
        return;
    }
    const std::string name = hello.client_name() ? hello.client_name()->str() : "";
    if (auto valid = checkClientText(name, "Hello.client_name", max_client_name_bytes); !valid) {
        sendError(identity, 0, valid.error().message);
        return;
    }
    // Refused here already when it could not bind, though binding checks again: as
    // many clients may say Hello at once as like.
    if (clients_.size() >= config_.limits.max_clients) {
        sendError(identity, 0, fmt::format("framecld serves limits.max_clients = {} clients already",
                                           config_.limits.max_clients));
        return;
    }
    // Nothing is kept: the token carries what binding needs (ipc/welcome_token.hpp).
    const std::string token = tokens_.issue({identity, name, std::chrono::steady_clock::now()});

    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<wire::PipelineInfo>> pipelines;
    for (const auto& entry : catalog_.pipelines) {
        std::vector<std::string> stages;
        for (const auto& stage : entry->stages)
            stages.push_back(stage.label);
        const std::vector<std::string> tuned = tuner_ ? tuner_->describe(*entry) : std::vector<std::string>{};
        const std::vector<std::string> fusion = pipeline::describeFusion(*entry);
        pipelines.push_back(wire::CreatePipelineInfo(builder, builder.CreateString(entry->name),
                                                     builder.CreateVectorOfStrings(stages),
                                                     builder.CreateString(gpu::recordingModeName(recording_)),
                                                     builder.CreateVectorOfStrings(tuned),
                                                     builder.CreateVectorOfStrings(fusion)));
    }
    const std::string device = gpu_.capabilities().name;
    auto welcome = wire::CreateWelcomeDirect(builder, protocol::protocol_version, token.c_str(), FRAMECL_VERSION,
                                             device.c_str(), config_.daemon.buffer_socket.c_str(), &pipelines,
                                             release_fences_ != nullptr);
    const log::ScopedFields about({name, {}, {}});
    logger->debug("Hello from '{}'", name);
    send(identity, protocol::finishEnvelope(builder, welcome));
}

ClientState* Server::clientByIdentity(const std::string& identity)
{
    for (auto& [token, client] : clients_)
        if (client.identity == identity)
            return &client;
    return nullptr;
}

ClientState* Server::clientByToken(const std::string& token)
{
    auto it = clients_.find(token);
    return it == clients_.end() ? nullptr : &it->second;
}

ClientState* Server::clientByConnection(int fd)
{
    for (auto& [token, client] : clients_)
        if (client.buffer_connection.get() == fd)
            return &client;
    return nullptr;
}

ClientState* Server::clientById(uint64_t id)
{
    for (auto& [token, client] : clients_)
        if (client.id == id)
            return &client;
    return nullptr;
}

void Server::housekeeping()
{
    uint64_t expirations = 0;
    [[maybe_unused]] ssize_t got = read(housekeeping_timer_.get(), &expirations, sizeof expirations);
    if (listener_paused_) { // out of fds at the last accept: try again
        if (!spare_fd_.valid())
            spare_fd_.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
        listener_paused_ = false;
        watch(buffer_listener_.get(), [this] { acceptBufferConnection(); });
    }
    const auto now = std::chrono::steady_clock::now();
    std::vector<int> unbound_expired;
    for (const auto& [fd, unbound] : unbound_connections_)
        if (now - unbound.accepted > unbound_connection_expiry)
            unbound_expired.push_back(fd);
    for (int fd : unbound_expired) {
        unauthenticated_events_.note("buffer socket: connections closed for sending no RegisterBuffers in time",
                                     fmt::format("buffer socket: a connection sent no RegisterBuffers within {} s; "
                                                 "closed",
                                                 unbound_connection_expiry.count()));
        closeBufferConnection(fd);
    }
    std::erase_if(spent_tokens_, [&](const auto& spent) { return now - spent.second > token_lifetime; });
    unauthenticated_events_.summarize(housekeeping_period.count());
}

void Server::dropClient(const std::string& token, bool disconnected)
{
    auto it = clients_.find(token);
    if (it == clients_.end())
        return;
    ClientState& client = it->second;
    const log::ScopedFields about({client.name, {}, {}});
    // Counted only when something was left behind: a client that held nothing freed
    // nothing, whichever of its two sockets the daemon saw close first.
    if (disconnected && (!client.buffers.empty() || !client.sessions.empty())) {
        ++released_.clients;
        released_.buffers += client.buffers.size();
        released_.sessions += client.sessions.size();
    }
    log::get("ipc")->info("client '{}' {}: released {} buffers and {} sessions{}", client.name,
                          disconnected ? "went away" : "said goodbye", client.buffers.size(), client.sessions.size(),
                          client.in_flight ? fmt::format(" ({} frames still on the GPU)", client.in_flight) : "");
    if (client.buffer_connection.valid())
        loop_.unwatch(client.buffer_connection.get());
    const uint64_t client_id = client.id;
    // Its sessions being opened are not wanted any more: a departed client's requests
    // would otherwise hold the preparer and the GPU, and not count against any limit.
    std::vector<uint64_t> opening;
    for (auto ticket = opening_.begin(); ticket != opening_.end();)
        if (ticket->second.token == token) {
            opening.push_back(ticket->first);
            ticket = opening_.erase(ticket);
        } else {
            ++ticket;
        }
    if (!opening.empty())
        preparer_.cancel(opening);
    for (FencedFrame& fenced : client.fenced)
        leaveFenceQueue(fenced); // their Dones would go nowhere
    clients_.erase(it); // frames on the GPU keep their buffers and session until they end
    scheduler_.removeClient(client_id);
    feed();
}

void Server::assignClass(ClientState& client)
{
    client.client_class.clear();
    client.weight = 1;
    client.priority_lane.reset();
    for (const config::ClientClass& candidate : config_.client_classes) {
        const bool matches = (candidate.match_name && fnmatch(candidate.match_name->c_str(), client.name.c_str(), 0) == 0) ||
                             (candidate.uid && client.peer && client.peer->uid == *candidate.uid) ||
                             (candidate.gid && client.peer && client.peer->gid == *candidate.gid);
        if (matches) {
            client.client_class = candidate.name;
            client.weight = candidate.weight;
            if (candidate.gpu_priority)
                client.priority_lane = gpu_.priorityLane(*candidate.gpu_priority);
            break;
        }
    }
    scheduler_.placeClient(client.id, gpu_.laneRank(client.priority_lane.value_or(0)), client.weight);
}

} // namespace framecl::ipc
