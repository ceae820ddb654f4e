#include "framecl_client.hpp"

#include "envelope.hpp"
#include "fd_passing.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <thread>

using namespace framecl::clientlib;

namespace {

// While the daemon is being restarted, how often reconnecting is tried again.
constexpr std::chrono::milliseconds reconnect_interval{100};

void watch(int epoll, int fd)
{
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

Failure systemFailure(const char* call)
{
    return Failure{errno, fmt::format("{}: {}", call, std::strerror(errno))};
}

} // namespace

framecl_client::framecl_client(std::string socket_path, std::string client_name,
                               std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), client_name_(std::move(client_name)), timeout_(timeout),
      context_(1)
{
}

Outcome<std::unique_ptr<framecl_client>> framecl_client::connect(std::string socket_path,
                                                                 std::string client_name,
                                                                 std::chrono::milliseconds timeout)
{
    std::unique_ptr<framecl_client> client(
        new framecl_client(std::move(socket_path), std::move(client_name), timeout));
    client->poll_fd_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!client->poll_fd_.valid()) return tl::unexpected(systemFailure("epoll_create1"));
    client->pending_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!client->pending_.valid()) return tl::unexpected(systemFailure("eventfd"));
    watch(client->poll_fd_.get(), client->pending_.get());

    auto connection = client->establish(client->requestDeadline());
    if (!connection) return tl::unexpected(connection.error());
    client->install(std::move(*connection));
    return client;
}

framecl_client::~framecl_client()
{
    if (connection_) connection_->sayGoodbye();
}

int framecl_client::fail(const Failure& failure)
{
    last_error_ = failure.message;
    return -failure.error;
}

// ---- Connection and reconnection ----------------------------------------------------

Outcome<std::unique_ptr<DaemonConnection>> framecl_client::establish(Deadline deadline)
{
    auto connection =
        Connection::open(context_, socket_path_, client_name_, deadline, int(timeout_.count()));
    if (!connection) return connection;
    if (auto restored = restoreBuffers(**connection, deadline); !restored)
        return tl::unexpected(restored.error());
    if (auto restored = restoreSessions(**connection, deadline); !restored)
        return tl::unexpected(restored.error());
    return connection;
}

Outcome<void> framecl_client::restoreBuffers(Connection& connection, Deadline deadline)
{
    // Same ids as before: the application holds them. A buffer the new daemon refuses
    // stays known here; frames naming it come back failed, with the daemon's reason.
    std::vector<BufferRegistration> batch;
    std::vector<int> fds;
    auto registerBatch = [&]() -> Outcome<void> {
        auto reply = registerOnDaemon(connection, batch, fds, deadline);
        batch.clear();
        fds.clear();
        if (!reply) return tl::unexpected(reply.error());
        return {};
    };
    for (const auto& [id, buffer] : buffers_) {
        batch.push_back({id, buffer.layout});
        fds.push_back(buffer.fd.get());
        if (batch.size() == framecl::protocol::max_fds_per_packet)
            if (auto registered = registerBatch(); !registered) return registered;
    }
    if (batch.empty()) return {};
    return registerBatch();
}

Outcome<void> framecl_client::restoreSessions(Connection& connection, Deadline deadline)
{
    for (auto& [id, session] : sessions_) {
        auto opened = openOnDaemon(connection, session.request, deadline);
        if (opened) {
            session.daemon_id = opened->daemon_id;
            session.reopen_error.clear();
            session.parameters_to_resend = !session.parameters.empty();
            continue;
        }
        // The new daemon may have another configuration without this pipeline: the
        // session stays, unusable, and submits to it say why.
        if (opened.error().error != EINVAL && opened.error().error != EPROTO)
            return tl::unexpected(opened.error());
        session.daemon_id.reset();
        session.reopen_error = opened.error().message;
    }
    return {};
}

void framecl_client::install(std::unique_ptr<Connection> connection)
{
    watch(poll_fd_.get(), connection->messageFd());
    watch(poll_fd_.get(), connection->bufferSocket());
    daemon_ = connection->daemon();
    connection_ = std::move(connection);
}

void framecl_client::checkConnection()
{
    if (!connection_) return;
    // Dones that arrived before the daemon died are reported before the lost frames.
    drainMessages(*connection_, {});
    if (connection_->alive()) return;
    drainMessages(*connection_, {});
    noticeLoss();
}

void framecl_client::noticeLoss()
{
    for (const auto& frame : in_flight_)
        dones_.push_back({lostDone(frame.session, frame.sequence), std::nullopt});
    in_flight_.clear();
    epoll_ctl(poll_fd_.get(), EPOLL_CTL_DEL, connection_->messageFd(), nullptr);
    epoll_ctl(poll_fd_.get(), EPOLL_CTL_DEL, connection_->bufferSocket(), nullptr);
    // A new DEALER for the new daemon: the old one would reconnect by itself and hand
    // the new daemon requests from a client that never said Hello to it.
    connection_->abandon();
    connection_.reset();
    retry_until_ = Clock::now() + timeout_;
    updatePending();
}

int framecl_client::ensureConnected()
{
    checkConnection();
    return connection_ ? 0 : reconnect();
}

int framecl_client::reconnect()
{
    const bool in_window = Clock::now() < retry_until_;
    const Deadline deadline = in_window ? Deadline::at(retry_until_) : requestDeadline();
    for (;;) {
        auto connection = establish(deadline);
        if (connection) {
            install(std::move(*connection));
            return 0;
        }
        if (!in_window || deadline.expired())
            return fail({ENOTCONN, notRunning(connection.error().message)});
        // A restarting daemon needs a moment to create its socket again.
        std::this_thread::sleep_for(
            std::min<std::chrono::milliseconds>(reconnect_interval, deadline.left()));
    }
}

template <typename Operation> int framecl_client::withDaemon(Operation&& operation)
{
    for (int attempt = 0;; ++attempt) {
        if (const int error = ensureConnected(); error < 0) return error;
        const Outcome<void> result = operation(*connection_);
        if (result) return 0;
        if (result.error().error != daemon_gone) return fail(result.error());
        noticeLoss();
        if (attempt == 1) return fail({ENOTCONN, notRunning(result.error().message)});
    }
}

std::string framecl_client::notRunning(const std::string& reason) const
{
    return fmt::format("framecld is not running at {} ({})", socket_path_, reason);
}

// ---- Messages -----------------------------------------------------------------------

Outcome<framecl_client::Reply> framecl_client::request(Connection& connection,
                                                       std::span<const uint8_t> envelope,
                                                       uint32_t request_id, Deadline deadline)
{
    if (auto sent = connection.send(envelope); !sent) return tl::unexpected(sent.error());
    // An ErrorReply with request_id 0 is about a message the daemon could not read or
    // place: with one request outstanding at a time, this one. Replies to requests given
    // up on are dropped.
    const auto answers = [request_id](const framecl::wire::Envelope& envelope) {
        const std::optional<uint32_t> id = replyRequestId(envelope);
        return id == request_id ||
               (envelope.message_type() == framecl::wire::Message::ErrorReply && id == 0u);
    };
    preparing_request_ = 0;
    for (;;) {
        if (auto reply = drainMessages(connection, answers)) {
            if (const auto* error =
                    framecl::wire::GetEnvelope(reply->data())->message_as_ErrorReply())
                return failure(EINVAL, text(error->message()));
            return std::move(*reply);
        }
        // The daemon is still at work on it: the wait starts again.
        if (preparing_request_ == request_id) deadline = requestDeadline();
        preparing_request_ = 0;
        if (!connection.alive()) return failure(daemon_gone, "framecld went away");
        if (deadline.expired())
            return failure(ETIMEDOUT, fmt::format("no answer from framecld at {} within {} ms",
                                                  socket_path_, timeout_.count()));
        connection.wait(deadline);
    }
}

uint32_t framecl_client::nextRequestId()
{
    // 0 is what the daemon answers a message it could not read with.
    if (next_request_id_ == 0) ++next_request_id_;
    return next_request_id_++;
}

std::optional<framecl_client::Reply>
framecl_client::drainMessages(Connection& connection, const Awaited& awaited)
{
    std::optional<Reply> reply;
    std::vector<uint8_t> aligned;
    while (auto received = connection.receive()) {
        const framecl::wire::Envelope* envelope =
            framecl::protocol::verifiedEnvelope(received->bytes, aligned);
        // Malformed, or naming a message without its table: ignored.
        if (!envelope || !envelope->message()) continue;
        if (const auto* done = envelope->message_as_Done())
            queueDone(*done);
        else if (const auto* accepted = envelope->message_as_FrameAccepted())
            noteReleaseFence(*accepted, received->fds);
        else if (const auto* preparing = envelope->message_as_SessionPreparing())
            notePreparing(*preparing);
        else if (awaited && !reply && awaited(*envelope))
            reply = std::move(received->bytes);
    }
    updatePending();
    return reply;
}

void framecl_client::notePreparing(const framecl::wire::SessionPreparing& preparing)
{
    preparing_request_ = preparing.request_id();
    // The daemon repeats a status every second while a step lasts: heard once.
    std::string status = text(preparing.status());
    if (status == last_status_) return;
    last_status_ = std::move(status);
    if (status_callback_) status_callback_(status_user_data_, last_status_.c_str());
}

void framecl_client::noteReleaseFence(const framecl::wire::FrameAccepted& accepted,
                                      std::vector<framecl::UniqueFd>& fds)
{
    // Kept only for the submit that waits for it, which takes it at once.
    if (fds.size() != 1 || !awaited_fence_ || awaited_fence_->first != accepted.session() ||
        awaited_fence_->second != accepted.sequence())
        return;
    release_fence_ = std::move(fds.front());
}

void framecl_client::queueDone(const framecl::wire::Done& done)
{
    // Dones for frames not in flight here (none should come) are dropped.
    const auto frame =
        std::find_if(in_flight_.begin(), in_flight_.end(), [&](const FrameInFlight& frame) {
            return frame.daemon_session == done.session() && frame.sequence == done.sequence();
        });
    if (frame == in_flight_.end()) return;
    dones_.push_back({doneFromWire(done, frame->session), statisticsFromWire(done)});
    in_flight_.erase(frame);
}

void framecl_client::updatePending()
{
    // framecl_fd() must stay readable while dones wait here: neither socket signals
    // again for messages this library has already read.
    const bool waiting = !dones_.empty();
    if (waiting == pending_signalled_) return;
    eventfd_t count;
    if (waiting)
        eventfd_write(pending_.get(), 1);
    else
        eventfd_read(pending_.get(), &count);
    pending_signalled_ = waiting;
}

Outcome<framecl_client::Reply>
framecl_client::registerOnDaemon(Connection& connection,
                                 std::span<const BufferRegistration> buffers,
                                 std::span<const int> fds, Deadline deadline)
{
    flatbuffers::FlatBufferBuilder builder;
    if (auto sent = connection.sendRegistration(
            registerBuffersMessage(builder, connection.daemon().token, buffers), fds, deadline);
        !sent)
        return tl::unexpected(sent.error());
    // The reply to a registration that timed out earlier may still arrive first: only
    // the one that names these buffers answers this packet. One naming id 0, which the
    // library never gives, is framecld refusing a whole packet. Dones come meanwhile.
    const auto answers = [&](const framecl::wire::Envelope& envelope) {
        const auto* reply = envelope.message_as_RegisterBuffersReply();
        if (!reply || !reply->results()) return false;
        return std::any_of(reply->results()->begin(), reply->results()->end(), [&](const auto* result) {
            return (result->id() == 0 && result->error()) || result->id() == buffers.front().id;
        });
    };
    for (;;) {
        if (auto reply = drainMessages(connection, answers)) {
            for (const auto* result : *framecl::wire::GetEnvelope(reply->data())
                                           ->message_as_RegisterBuffersReply()
                                           ->results())
                if (result->id() == 0 && result->error())
                    return failure(EINVAL, result->error()->str());
            return std::move(*reply);
        }
        if (!connection.alive()) return failure(daemon_gone, "framecld closed its buffer socket");
        if (deadline.expired())
            return failure(ETIMEDOUT, fmt::format("no answer from framecld on its buffer socket {}",
                                                  connection.daemon().buffer_socket));
        connection.wait(deadline);
    }
}

Outcome<framecl_client::OpenedSession> framecl_client::openOnDaemon(Connection& connection,
                                                                    const SessionRequest& request,
                                                                    Deadline deadline)
{
    flatbuffers::FlatBufferBuilder builder;
    const uint32_t request_id = nextRequestId();
    auto reply = this->request(connection, openSessionMessage(builder, request_id, request),
                               request_id, deadline);
    if (!reply) return tl::unexpected(reply.error());
    const auto* opened = framecl::wire::GetEnvelope(reply->data())->message_as_SessionOpened();
    if (!opened)
        return failure(EPROTO,
                       "framecld answered OpenSession with another message than SessionOpened");
    return OpenedSession{opened->session(), outputLayout(opened->output())};
}

// ---- The C API's operations ---------------------------------------------------------

int framecl_client::registerBuffer(int fd, const framecl_frame_layout& layout, uint32_t* id)
{
    if (const char* problem = framecl_layout_problem(&layout))
        return fail({EINVAL, fmt::format("buffer layout: {}", problem)});
    framecl::UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (!copy.valid())
        return fail({errno, fmt::format("cannot duplicate fd {}: {}", fd, std::strerror(errno))});
    // Never reused, so that a late reply about an earlier attempt names no live buffer.
    const BufferRegistration registration{next_buffer_id_++, layout};
    const int fds[] = {copy.get()};
    const int result = withDaemon([&](Connection& connection) -> Outcome<void> {
        auto reply = registerOnDaemon(connection, {&registration, 1}, fds, requestDeadline());
        if (!reply) return tl::unexpected(reply.error());
        const auto* results =
            framecl::wire::GetEnvelope(reply->data())->message_as_RegisterBuffersReply()->results();
        for (const auto* buffer : *results)
            if (buffer->id() == registration.id && buffer->error())
                return failure(EINVAL, buffer->error()->str());
        return {};
    });
    if (result < 0) return result;
    buffers_.emplace(registration.id, Buffer{std::move(copy), layout});
    *id = registration.id;
    return 0;
}

int framecl_client::releaseBuffer(uint32_t id)
{
    const auto buffer = buffers_.find(id);
    if (buffer == buffers_.end()) return fail({EINVAL, fmt::format("no buffer {}", id)});
    checkConnection();
    int result = 0;
    // Without a connection there is no daemon holding the buffer: the next one would
    // only learn of it at reconnection.
    if (connection_)
        result = withDaemon([&](Connection& connection) -> Outcome<void> {
            flatbuffers::FlatBufferBuilder builder;
            const uint32_t request_id = nextRequestId();
            auto reply = request(connection, releaseBuffersMessage(builder, request_id, id),
                                 request_id, requestDeadline());
            if (!reply) return tl::unexpected(reply.error());
            return {};
        });
    // Whatever the daemon said, the application is done with the buffer; ids are never
    // reused, so a daemon that still holds it confuses nothing, and drops it with us.
    buffers_.erase(id);
    return result;
}

int framecl_client::openSession(SessionRequest request, uint32_t* session,
                                framecl_frame_layout* output)
{
    OpenedSession opened{};
    const int result = withDaemon([&](Connection& connection) -> Outcome<void> {
        auto reply = openOnDaemon(connection, request, requestDeadline());
        if (!reply) return tl::unexpected(reply.error());
        opened = *reply;
        return {};
    });
    if (result < 0) return result;
    const uint32_t id = next_session_id_++;
    sessions_.emplace(id, Session{std::move(request), opened.daemon_id, {}, {}, false});
    *session = id;
    if (output) *output = opened.output;
    return 0;
}

int framecl_client::closeSession(uint32_t id)
{
    const auto session = sessions_.find(id);
    if (session == sessions_.end()) return fail({EINVAL, fmt::format("no session {}", id)});
    checkConnection();
    int result = 0;
    // As for buffers: a daemon that does not have the session open needs no telling.
    if (connection_ && session->second.daemon_id)
        result = withDaemon([&](Connection& connection) -> Outcome<void> {
            if (!session->second.daemon_id) return {};
            flatbuffers::FlatBufferBuilder builder;
            const uint32_t request_id = nextRequestId();
            auto reply = request(
                connection, closeSessionMessage(builder, request_id, *session->second.daemon_id),
                request_id, requestDeadline());
            if (!reply) return tl::unexpected(reply.error());
            return {};
        });
    sessions_.erase(session);
    return result;
}

int framecl_client::submit(uint32_t session_id, uint32_t input_buffer, uint32_t output_buffer,
                           uint64_t sequence, int acquire_fence, int* release_fence,
                           std::span<const framecl_frame_parameter> parameters)
{
    if (release_fence) *release_fence = -1;
    const auto session = sessions_.find(session_id);
    if (session == sessions_.end()) return fail({EINVAL, fmt::format("no session {}", session_id)});
    for (const uint32_t buffer : {input_buffer, output_buffer})
        if (!buffers_.contains(buffer)) return fail({EINVAL, fmt::format("no buffer {}", buffer)});
    for (const framecl_frame_parameter& parameter : parameters)
        if (!parameter.key || (parameter.value_count > 0 && !parameter.values))
            return fail({EINVAL, "a frame parameter needs a key and its values"});
    return withDaemon([&](Connection& connection) -> Outcome<void> {
        // Read here, after any reconnection: the daemon's id changes with the daemon.
        const std::optional<uint32_t> daemon_session = session->second.daemon_id;
        if (!daemon_session)
            return failure(
                EINVAL,
                fmt::format("session {} could not be opened again after framecld restarted: {}",
                            session_id, session->second.reopen_error));
        std::vector<FrameParameterValues> changes;
        if (session->second.parameters_to_resend)
            for (const auto& [where, values] : session->second.parameters)
                changes.push_back({where.first, where.second, values});
        for (const framecl_frame_parameter& parameter : parameters)
            changes.push_back({parameter.stage, parameter.key, {parameter.values, parameter.value_count}});
        flatbuffers::FlatBufferBuilder builder;
        const bool fenced = acquire_fence >= 0;
        const auto message = submitMessage(builder, *daemon_session, input_buffer, output_buffer, sequence,
                                           fenced, release_fence != nullptr, changes);
        if (message.size() > framecl::protocol::max_packet_bytes)
            return failure(EMSGSIZE,
                           fmt::format("the frame's parameters make a Submit of {} bytes; one holds at most {}",
                                       message.size(), framecl::protocol::max_packet_bytes));
        auto sent = connection.sendFrame(
            message, fenced ? std::span<const int>(&acquire_fence, 1) : std::span<const int>());
        if (!sent) return sent;
        session->second.parameters_to_resend = false;
        for (const framecl_frame_parameter& parameter : parameters)
            session->second.parameters[{parameter.stage, parameter.key}].assign(
                parameter.values, parameter.values + parameter.value_count);
        in_flight_.push_back({session_id, *daemon_session, sequence});
        if (!release_fence) return {};
        return awaitReleaseFence(connection, *daemon_session, sequence, release_fence);
    });
}

framecl::clientlib::Outcome<void> framecl_client::awaitReleaseFence(Connection& connection,
                                                                   uint32_t daemon_session,
                                                                   uint64_t sequence, int* fd)
{
    // FrameAccepted comes when the daemon has taken the frame; a frame refused at once
    // gets its Done instead, which says why, and no fence.
    awaited_fence_ = {daemon_session, sequence};
    release_fence_.reset();
    const Deadline deadline = requestDeadline();
    const auto frame_ended = [&] {
        return std::none_of(in_flight_.begin(), in_flight_.end(), [&](const FrameInFlight& frame) {
            return frame.daemon_session == daemon_session && frame.sequence == sequence;
        });
    };
    for (;;) {
        drainMessages(connection, {});
        if (release_fence_.valid() || frame_ended()) break;
        if (!connection.alive()) break; // the frame comes back FRAMECL_FRAME_LOST
        if (deadline.expired()) {
            awaited_fence_.reset();
            return failure(ETIMEDOUT, fmt::format("no release fence from framecld within {} ms",
                                                  timeout_.count()));
        }
        connection.wait(deadline);
    }
    awaited_fence_.reset();
    *fd = release_fence_.release();
    return {};
}

int framecl_client::nextDone(int timeout_ms, framecl_done* done)
{
    const Deadline deadline =
        timeout_ms < 0 ? Deadline::never() : Deadline::after(std::chrono::milliseconds(timeout_ms));
    for (;;) {
        checkConnection();
        if (!dones_.empty()) {
            *done = dones_.front().done;
            done_statistics_ = dones_.front().statistics;
            dones_.pop_front();
            updatePending();
            return 0;
        }
        if (!connection_) {
            // A call that must not wait does not reconnect, which can take the timeout.
            if (timeout_ms == 0)
                return fail(
                    {ENOTCONN, notRunning("it went away; the next call that may wait reconnects")});
            if (const int error = reconnect(); error < 0) return error;
            continue;
        }
        if (deadline.expired()) {
            if (timeout_ms == 0) return fail({EAGAIN, "no frame is done yet"});
            return fail({ETIMEDOUT, fmt::format("no frame was done within {} ms", timeout_ms)});
        }
        connection_->wait(deadline);
    }
}

int framecl_client::stats(std::string* json)
{
    return withDaemon([&](Connection& connection) -> Outcome<void> {
        flatbuffers::FlatBufferBuilder builder;
        const uint32_t request_id = nextRequestId();
        auto reply = request(connection, statsRequestMessage(builder, request_id), request_id,
                             requestDeadline());
        if (!reply) return tl::unexpected(reply.error());
        const auto* stats = framecl::wire::GetEnvelope(reply->data())->message_as_StatsReply();
        if (!stats || !stats->json())
            return failure(EPROTO, "framecld answered StatsRequest without statistics");
        *json = stats->json()->str();
        return {};
    });
}

int framecl_client::trace(uint32_t seconds, std::string* json)
{
    // The daemon answers when the window closes: the request timeout counts from then.
    const std::chrono::milliseconds wait = std::chrono::seconds(seconds) + timeout_;
    return withDaemon([&](Connection& connection) -> Outcome<void> {
        flatbuffers::FlatBufferBuilder builder;
        const uint32_t request_id = nextRequestId();
        auto reply = request(connection, traceRequestMessage(builder, request_id, seconds),
                             request_id, Deadline::after(wait));
        if (!reply) {
            if (reply.error().error == ETIMEDOUT)
                return failure(ETIMEDOUT,
                               fmt::format("no trace from framecld at {} within {} s plus {} ms",
                                           socket_path_, seconds, timeout_.count()));
            return tl::unexpected(reply.error());
        }
        const auto* trace = framecl::wire::GetEnvelope(reply->data())->message_as_TraceReply();
        if (!trace || !trace->json())
            return failure(EPROTO, "framecld answered TraceRequest without a trace");
        *json = trace->json()->str();
        return {};
    });
}
