#pragma once
// A client of a RunningDaemon that speaks the wire protocol by hand (docs/protocol.md),
// for tests that send what libframecl never would: its own Hello, requests before
// the buffer socket is bound, strings that are not UTF-8.

#include <string>
#include <utility>

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <zmq.hpp>

#include "base/unique_fd.hpp"
#include "daemon_fixture.hpp"
#include "envelope.hpp"
#include "fd_passing.hpp"

namespace framecl::test {

class RawClient {
public:
    explicit RawClient(const RunningDaemon& daemon) : buffer_socket_path_(daemon.bufferSocket())
    {
        dealer_.set(zmq::sockopt::rcvtimeo, 20000);
        dealer_.set(zmq::sockopt::linger, 0);
        dealer_.connect("ipc://" + daemon.socket().string());
    }

    // Sends `bytes` on the ZeroMQ socket and returns the reply: its type and bytes.
    std::pair<wire::Message, std::string> roundTrip(std::span<const uint8_t> bytes)
    {
        send(bytes);
        return receive();
    }

    // Sends `bytes` on the ZeroMQ socket, reading nothing.
    void send(std::span<const uint8_t> bytes) { dealer_.send(zmq::buffer(bytes.data(), bytes.size())); }

    // The next message on the ZeroMQ socket, past the SessionPreparing statuses that
    // come before a slow OpenSession's reply.
    std::pair<wire::Message, std::string> receive()
    {
        for (;;)
            if (auto message = receiveAny(); message.first != wire::Message::SessionPreparing)
                return message;
    }

    // The next message on the ZeroMQ socket, whatever it is.
    std::pair<wire::Message, std::string> receiveAny()
    {
        zmq::message_t reply;
        REQUIRE_MESSAGE(dealer_.recv(reply), "no reply from framecld");
        std::vector<uint8_t> aligned;
        const wire::Envelope* envelope = protocol::verifiedEnvelope({reply.data<uint8_t>(), reply.size()}, aligned);
        REQUIRE(envelope);
        return {envelope->message_type(), std::string(reply.to_string_view())};
    }

    // Says Hello as `name`; returns the Welcome's token, or the ErrorReply's message
    // with `welcomed` false.
    std::string hello(const std::string& name, bool* welcomed = nullptr)
    {
        flatbuffers::FlatBufferBuilder builder;
        const auto [type, text] = roundTrip(protocol::finishEnvelope(
            builder, wire::CreateHello(builder, protocol::protocol_version, builder.CreateString(name))));
        const wire::Envelope* envelope = envelopeOf(text);
        if (welcomed)
            *welcomed = type == wire::Message::Welcome;
        else
            REQUIRE(type == wire::Message::Welcome);
        if (type == wire::Message::Welcome)
            return envelope->message_as_Welcome()->token()->str();
        REQUIRE(type == wire::Message::ErrorReply);
        return envelope->message_as_ErrorReply()->message()->str();
    }

    // Connects the buffer socket and binds it to the client of `token` with an empty
    // RegisterBuffers, as libframecl does right after the Welcome. Returns the refusal
    // the reply carries, "" where the connection was bound.
    std::string bind(const std::string& token)
    {
        buffer_socket_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
        const timeval patience{20, 0}; // as the DEALER's: a reply that never comes fails the test
        setsockopt(buffer_socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, buffer_socket_path_.c_str(), sizeof address.sun_path - 1);
        REQUIRE(connect(buffer_socket_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        flatbuffers::FlatBufferBuilder builder;
        std::vector<flatbuffers::Offset<wire::BufferRegistration>> none;
        REQUIRE(protocol::sendPacket(buffer_socket_.get(),
                                     protocol::finishEnvelope(builder, wire::CreateRegisterBuffersDirect(
                                                                           builder, token.c_str(), &none))));
        auto reply = protocol::receivePacket(buffer_socket_.get());
        REQUIRE(reply);
        std::vector<uint8_t> aligned;
        const wire::Envelope* envelope = protocol::verifiedEnvelope(reply->bytes, aligned);
        REQUIRE(envelope);
        REQUIRE(envelope->message_type() == wire::Message::RegisterBuffersReply);
        const auto* results = envelope->message_as_RegisterBuffersReply()->results();
        return results && results->size() > 0 && results->Get(0)->error() ? results->Get(0)->error()->str() : "";
    }

    // The bound buffer socket.
    int bufferSocket() const { return buffer_socket_.get(); }

    // Sends `bytes` as one packet on the bound buffer socket, reading nothing.
    void sendFrame(std::span<const uint8_t> bytes) { REQUIRE(protocol::sendPacket(buffer_socket_.get(), bytes)); }

    // Sends `bytes` as one packet on the bound buffer socket and returns the packet that
    // answers it: its type and bytes.
    std::pair<wire::Message, std::string> frameRoundTrip(std::span<const uint8_t> bytes)
    {
        sendFrame(bytes);
        auto reply = protocol::receivePacket(buffer_socket_.get());
        REQUIRE(reply);
        REQUIRE_FALSE(reply->closed);
        std::vector<uint8_t> aligned;
        const wire::Envelope* envelope = protocol::verifiedEnvelope(reply->bytes, aligned);
        REQUIRE(envelope);
        return {envelope->message_type(), std::string(reply->bytes.begin(), reply->bytes.end())};
    }

    // Valid while `bytes` are and until the thread's next call (a short string's bytes
    // may be unaligned, and are then read from a copy kept here).
    static const wire::Envelope* envelopeOf(const std::string& bytes)
    {
        static thread_local std::vector<uint8_t> aligned;
        return protocol::verifiedEnvelope({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, aligned);
    }

private:
    zmq::context_t context_;
    zmq::socket_t dealer_{context_, zmq::socket_type::dealer};
    std::filesystem::path buffer_socket_path_;
    UniqueFd buffer_socket_;
};

} // namespace framecl::test
