#include "fake_daemon.hpp"

#include "envelope.hpp"
#include "fd_passing.hpp"

#include <chrono>
#include <cstring>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

namespace framecl::test {

namespace {

namespace wire = framecl::wire;
using protocol::finishEnvelope;

UniqueFd listenSeqpacket(const std::string& path)
{
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    if (!listener.valid() ||
        bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        listen(listener.get(), 4) != 0)
        throw std::runtime_error("fake daemon: cannot listen at " + path + ": " +
                                 std::strerror(errno));
    return listener;
}

std::string str(const flatbuffers::String* string)
{
    return string ? string->str() : std::string();
}

} // namespace

FakeDaemon::FakeDaemon(std::filesystem::path directory) : directory_(std::move(directory)) {}

FakeDaemon::~FakeDaemon()
{
    stop();
}

void FakeDaemon::start(FakeDaemonBehaviour behaviour)
{
    stop();
    ++runs_;
    {
        std::lock_guard lock(mutex_);
        token_ = "token-" + std::to_string(runs_);
        log_ = {};
    }
    context_ = std::make_unique<zmq::context_t>(1);
    zmq::socket_t router(*context_, zmq::socket_type::router);
    router.set(zmq::sockopt::linger, 0);
    router.bind("ipc://" + socketPath());
    UniqueFd listener = listenSeqpacket((directory_ / "buffers.sock").string());
    stopping_ = false;
    thread_ = std::thread(&FakeDaemon::serve, this, std::move(router), std::move(listener),
                          std::move(behaviour), uint32_t(100 * runs_ + 1));
}

void FakeDaemon::stop()
{
    if (!thread_.joinable()) return;
    stopping_ = true;
    thread_.join();
    context_.reset();
    std::filesystem::remove(directory_ / "buffers.sock");
}

std::string FakeDaemon::token() const
{
    std::lock_guard lock(mutex_);
    return token_;
}

FakeDaemonLog FakeDaemon::log() const
{
    std::lock_guard lock(mutex_);
    return log_;
}

void FakeDaemon::serve(zmq::socket_t router, UniqueFd listener, FakeDaemonBehaviour behaviour,
                       uint32_t first_session)
{
    const std::string token = this->token();
    uint32_t next_session = first_session;
    UniqueFd connection;
    flatbuffers::FlatBufferBuilder builder;
    // Submits held back by answer_submits = false (from the one buffer-socket connection
    // a run serves), and trace replies waiting for their window to close.
    struct HeldSubmit {
        uint32_t session;
        uint64_t sequence;
    };
    struct PendingTrace {
        zmq::message_t identity;
        uint32_t request_id;
        std::chrono::steady_clock::time_point due;
    };
    std::vector<HeldSubmit> held_submits;
    std::vector<PendingTrace> pending_traces;

    // With empty_messages_first, what goes before `envelope`: an Envelope of its type
    // without the table.
    flatbuffers::FlatBufferBuilder empty_builder;
    auto emptyMessageBefore = [&](std::span<const uint8_t> envelope) {
        empty_builder.Clear();
        empty_builder.Finish(
            wire::CreateEnvelope(empty_builder, wire::GetEnvelope(envelope.data())->message_type()));
        return std::span<const uint8_t>(empty_builder.GetBufferPointer(), empty_builder.GetSize());
    };

    auto reply = [&](const zmq::message_t& identity, std::span<const uint8_t> envelope) {
        const auto send = [&](std::span<const uint8_t> bytes) {
            router.send(zmq::buffer(identity.data(), identity.size()), zmq::send_flags::sndmore);
            router.send(zmq::buffer(bytes.data(), bytes.size()), zmq::send_flags::none);
        };
        if (behaviour.empty_messages_first) send(emptyMessageBefore(envelope));
        send(envelope);
    };

    auto sendPacket = [&](std::span<const uint8_t> envelope) {
        if (behaviour.empty_messages_first)
            (void)protocol::sendPacket(connection.get(), emptyMessageBefore(envelope));
        (void)protocol::sendPacket(connection.get(), envelope);
    };

    // Dones go on the buffer socket, where the Submits came.
    auto sendDone = [&](uint32_t session, uint64_t sequence) {
        builder.Clear();
        const std::vector<flatbuffers::Offset<wire::StageTime>> stages{
            wire::CreateStageTimeDirect(builder, "copy", 1000)};
        sendPacket(
            finishEnvelope(builder, wire::CreateDoneDirect(builder, session, sequence,
                                                           wire::FrameStatus::Ok, nullptr, 1, 2, 3,
                                                           &stages)));
    };

    auto answerMessage = [&](const zmq::message_t& identity, const wire::Envelope& envelope) {
        builder.Clear();
        std::lock_guard lock(mutex_);
        switch (envelope.message_type()) {
        case wire::Message::Hello: {
            log_.hello_names.push_back(str(envelope.message_as_Hello()->client_name()));
            if (!behaviour.hello_error.empty()) {
                reply(identity,
                      finishEnvelope(builder, wire::CreateErrorReplyDirect(
                                                  builder, 0, behaviour.hello_error.c_str())));
                break;
            }
            const std::vector<flatbuffers::Offset<flatbuffers::String>> stages{
                builder.CreateString("copy")};
            const std::vector<flatbuffers::Offset<wire::PipelineInfo>> pipelines{
                wire::CreatePipelineInfo(builder, builder.CreateString("copy"),
                                         builder.CreateVector(stages))};
            reply(identity,
                  finishEnvelope(builder, wire::CreateWelcomeDirect(
                                              builder, protocol::protocol_version, token.c_str(),
                                              "0.1.0", "fake device (host-ptr)",
                                              (directory_ / "buffers.sock").c_str(), &pipelines)));
            break;
        }
        case wire::Message::OpenSession: {
            const auto* open = envelope.message_as_OpenSession();
            const std::string pipeline = str(open->pipeline());
            log_.opened_pipelines.push_back(pipeline);
            log_.opened_options.push_back({open->backpressure(), open->deadline_us()});
            if (pipeline != "copy") {
                reply(identity, finishEnvelope(
                                    builder, wire::CreateErrorReplyDirect(
                                                 builder, open->request_id(),
                                                 ("unknown pipeline '" + pipeline + "'").c_str())));
                break;
            }
            for (int step = 0; step < behaviour.preparing_steps; ++step) {
                std::this_thread::sleep_for(behaviour.preparing_interval);
                flatbuffers::FlatBufferBuilder status;
                reply(identity, finishEnvelope(status, wire::CreateSessionPreparingDirect(
                                                           status, open->request_id(),
                                                           ("step " + std::to_string(step + 1)).c_str())));
            }
            std::this_thread::sleep_for(behaviour.preparing_interval);
            log_.opened_sessions.push_back(next_session);
            const auto output = wire::CreateFrameLayout(
                builder, open->input()->fourcc(), open->input()->width(), open->input()->height());
            reply(identity, finishEnvelope(builder, wire::CreateSessionOpenedDirect(
                                                        builder, open->request_id(), next_session++,
                                                        output, "off")));
            break;
        }
        case wire::Message::CloseSession:
            reply(identity,
                  finishEnvelope(
                      builder,
                      wire::CreateAck(builder, envelope.message_as_CloseSession()->request_id())));
            break;
        case wire::Message::ReleaseBuffers:
            reply(identity,
                  finishEnvelope(builder,
                                 wire::CreateAck(
                                     builder, envelope.message_as_ReleaseBuffers()->request_id())));
            break;
        case wire::Message::StatsRequest:
            reply(identity,
                  finishEnvelope(builder,
                                 wire::CreateStatsReplyDirect(
                                     builder, envelope.message_as_StatsRequest()->request_id(),
                                     R"({"daemon": {"version": "0.1.0"}})")));
            break;
        case wire::Message::TraceRequest: {
            const auto* trace = envelope.message_as_TraceRequest();
            log_.trace_seconds.push_back(trace->seconds());
            // The held frames end during the window, so that their Dones reach the client
            // while it waits for the trace.
            for (const auto& held : held_submits)
                sendDone(held.session, held.sequence);
            held_submits.clear();
            pending_traces.push_back(
                {zmq::message_t(identity.data(), identity.size()), trace->request_id(),
                 std::chrono::steady_clock::now() + std::chrono::seconds(trace->seconds())});
            break;
        }
        case wire::Message::Goodbye:
            ++log_.goodbyes;
            break;
        default:
            break;
        }
    };

    auto answerPacket = [&](protocol::Packet& packet) {
        std::vector<uint8_t> aligned;
        const wire::Envelope* envelope = protocol::verifiedEnvelope(packet.bytes, aligned);
        if (!envelope) return;
        std::lock_guard lock(mutex_);
        if (const auto* submit = envelope->message_as_Submit()) {
            std::vector<FakeDaemonLog::Parameter> parameters;
            if (const auto* changes = submit->parameters())
                for (const auto* change : *changes)
                    parameters.push_back({change->stage(), str(change->key()),
                                          change->values() ? std::vector<double>(change->values()->begin(),
                                                                                 change->values()->end())
                                                           : std::vector<double>{}});
            log_.submits.push_back({submit->session(), submit->input_buffer(),
                                    submit->output_buffer(), submit->sequence(), std::move(parameters)});
            if (behaviour.answer_submits)
                sendDone(submit->session(), submit->sequence());
            else
                held_submits.push_back({submit->session(), submit->sequence()});
            return;
        }
        const auto* registration = envelope->message_as_RegisterBuffers();
        if (!registration) return;
        builder.Clear();
        log_.register_tokens.push_back(str(registration->token()));
        std::vector<flatbuffers::Offset<wire::BufferResult>> results;
        if (const auto* buffers = registration->buffers()) {
            for (uint32_t i = 0; i < buffers->size(); ++i) {
                const auto* buffer = buffers->Get(i);
                struct stat status {};
                if (i < packet.fds.size()) fstat(packet.fds[i].get(), &status);
                log_.registrations.push_back({buffer->id(), buffer->layout()->fourcc(),
                                              buffer->layout()->width(), buffer->layout()->height(),
                                              status.st_ino});
                results.push_back(
                    behaviour.buffer_error.empty()
                        ? wire::CreateBufferResultDirect(builder, buffer->id(), nullptr, "host-ptr")
                        : wire::CreateBufferResultDirect(builder, buffer->id(),
                                                         behaviour.buffer_error.c_str()));
            }
        }
        const auto envelope_bytes = finishEnvelope(
            builder, wire::CreateRegisterBuffersReply(builder, builder.CreateVector(results)));
        sendPacket(envelope_bytes);
    };

    while (!stopping_) {
        std::vector<zmq::pollitem_t> items{{router.handle(), 0, ZMQ_POLLIN, 0},
                                           {nullptr, listener.get(), ZMQ_POLLIN, 0},
                                           {nullptr, connection.get(), ZMQ_POLLIN, 0}};
        zmq::poll(items, std::chrono::milliseconds(10));
        // The buffer socket first, all of it: a Submit sent before a TraceRequest is then
        // held before the request releases the held frames, however the two arrive.
        if (connection.valid() && (items[2].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) {
            for (;;) {
                auto packet = protocol::receivePacket(connection.get());
                if (!packet || packet->closed) {
                    connection.reset();
                    break;
                }
                if (packet->none) break;
                answerPacket(*packet);
            }
        }
        if (items[0].revents & ZMQ_POLLIN) {
            zmq::message_t identity;
            while (router.recv(identity, zmq::recv_flags::dontwait)) {
                zmq::message_t payload;
                while (router.get(zmq::sockopt::rcvmore))
                    (void)router.recv(payload, zmq::recv_flags::dontwait);
                std::vector<uint8_t> aligned;
                if (const wire::Envelope* envelope =
                        protocol::verifiedEnvelope({payload.data<uint8_t>(), payload.size()}, aligned))
                    answerMessage(identity, *envelope);
            }
        }
        if (items[1].revents & ZMQ_POLLIN) {
            connection.reset(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
            if (!behaviour.connection_refusal.empty()) {
                builder.Clear();
                const std::vector<flatbuffers::Offset<wire::BufferResult>> refusal{
                    wire::CreateBufferResultDirect(builder, 0,
                                                   behaviour.connection_refusal.c_str())};
                (void)protocol::sendPacket(
                    connection.get(),
                    finishEnvelope(builder,
                                   wire::CreateRegisterBuffersReplyDirect(builder, &refusal)));
                connection.reset();
            }
        }
        const auto now = std::chrono::steady_clock::now();
        for (auto trace = pending_traces.begin(); trace != pending_traces.end();) {
            if (trace->due > now) {
                ++trace;
                continue;
            }
            builder.Clear();
            reply(trace->identity,
                  finishEnvelope(builder,
                                 wire::CreateTraceReplyDirect(builder, trace->request_id,
                                                              behaviour.trace_json.c_str())));
            trace = pending_traces.erase(trace);
        }
    }
}

} // namespace framecl::test
