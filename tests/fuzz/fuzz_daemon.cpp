#include "fuzz_daemon.hpp"

#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "base/log.hpp"
#include "fd_passing.hpp"
#include "framecl_build_config.h"
#include "gpu/context.hpp"

namespace framecl::fuzz {

test::InProcessDaemon& daemon(const std::string& extra_toml)
{
    // The suite's program cache, not the user's (tests/meson.build does the same).
    setenv("POCL_CACHE_DIR", FRAMECL_BUILD_ROOT "/tests/pocl-cache", 0);
    // Errors only: the daemon logs a line for each refusal, and a fuzzer makes millions.
    log::setup(log::Sink::Stderr, spdlog::level::err);
    static test::InProcessDaemon instance("[gpu]\ntuning = \"off\"\n" + extra_toml,
                                          [](const config::GpuConfig& config) {
                                              auto gpu = gpu::openGpu(config);
                                              if (!gpu)
                                                  fail("opening the GPU: " + gpu.error().message);
                                              return std::move(*gpu);
                                          });
    return instance;
}

UniqueFd memfd(uint64_t size, int seals)
{
    UniqueFd fd(memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid() || ftruncate(fd.get(), off_t(size)) != 0 || (seals && fcntl(fd.get(), F_ADD_SEALS, seals) != 0))
        fail("making a memfd: " + std::string(std::strerror(errno)));
    return fd;
}

const wire::Envelope& verified(std::span<const uint8_t> bytes, std::vector<uint8_t>& storage)
{
    const wire::Envelope* envelope = protocol::verifiedEnvelope(bytes, storage);
    if (!envelope)
        fail("framecld sent a message that does not verify");
    return *envelope;
}

Client::Client(const test::InProcessDaemon& daemon)
{
    dealer_.set(zmq::sockopt::rcvtimeo, 10000);
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.connect("ipc://" + daemon.socket().string());

    flatbuffers::FlatBufferBuilder hello;
    send(protocol::finishEnvelope(hello, wire::CreateHello(hello, protocol::protocol_version,
                                                           hello.CreateString("fuzz"))));
    zmq::message_t reply;
    if (!dealer_.recv(reply))
        fail("no Welcome");
    std::vector<uint8_t> storage;
    const wire::Envelope& welcome = verified({reply.data<uint8_t>(), reply.size()}, storage);
    if (welcome.message_type() != wire::Message::Welcome)
        fail("Hello was not welcomed");
    token_ = welcome.message_as_Welcome()->token()->str();

    buffer_socket_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    const timeval patience{10, 0};
    setsockopt(buffer_socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, daemon.bufferSocket().c_str(), sizeof address.sun_path - 1);
    if (connect(buffer_socket_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        fail("connecting the buffer socket: " + std::string(std::strerror(errno)));
    flatbuffers::FlatBufferBuilder bind;
    std::vector<flatbuffers::Offset<wire::BufferRegistration>> none;
    if (!protocol::sendPacket(buffer_socket_.get(), protocol::finishEnvelope(bind, wire::CreateRegisterBuffersDirect(
                                                                                       bind, token_.c_str(), &none))))
        fail("sending the binding RegisterBuffers");
    const auto bound = bufferReply();
    if (!bound || verified(*bound, storage).message_type() != wire::Message::RegisterBuffersReply)
        fail("the buffer socket was not bound");
}

void Client::send(std::span<const uint8_t> bytes)
{
    if (!dealer_.send(zmq::buffer(bytes.data(), bytes.size())))
        fail("sending on the ZeroMQ socket");
}

std::vector<uint8_t> Client::replyTo(uint32_t request_id)
{
    for (;;) {
        zmq::message_t reply;
        if (!dealer_.recv(reply))
            fail("no reply to request " + std::to_string(request_id) + " within 10 s");
        std::vector<uint8_t> bytes(reply.data<uint8_t>(), reply.data<uint8_t>() + reply.size());
        std::vector<uint8_t> storage;
        const wire::Envelope& envelope = verified(bytes, storage);
        const auto id = [&]() -> uint64_t {
            switch (envelope.message_type()) {
            case wire::Message::StatsReply: return envelope.message_as_StatsReply()->request_id();
            case wire::Message::ErrorReply: return envelope.message_as_ErrorReply()->request_id();
            case wire::Message::Ack: return envelope.message_as_Ack()->request_id();
            default: return UINT64_MAX; // a reply to an earlier input, or not a reply
            }
        }();
        if (id == request_id)
            return bytes;
    }
}

bool Client::answersStats()
{
    const uint32_t id = nextRequestId();
    flatbuffers::FlatBufferBuilder request;
    send(protocol::finishEnvelope(request, wire::CreateStatsRequest(request, id)));
    // A peer the daemon does not know is told so with request id 0 (docs/protocol.md).
    for (;;) {
        zmq::message_t reply;
        if (!dealer_.recv(reply))
            fail("no reply to StatsRequest " + std::to_string(id) + " within 10 s");
        std::vector<uint8_t> storage;
        const wire::Envelope& envelope = verified({reply.data<uint8_t>(), reply.size()}, storage);
        if (const auto* stats = envelope.message_as_StatsReply(); stats && stats->request_id() == id)
            return true;
        if (const auto* error = envelope.message_as_ErrorReply();
            error && error->request_id() == 0 && error->message() && error->message()->string_view().starts_with("unknown client"))
            return false;
    }
}

std::optional<std::vector<uint8_t>> Client::bufferReply()
{
    auto packet = protocol::receivePacket(buffer_socket_.get());
    if (!packet)
        fail("no reply on the buffer socket: " + packet.error().message);
    if (packet->closed)
        return std::nullopt;
    std::vector<uint8_t> storage;
    verified(packet->bytes, storage);
    return std::move(packet->bytes);
}

} // namespace framecl::fuzz
