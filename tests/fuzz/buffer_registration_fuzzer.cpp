// RegisterBuffers on the buffer socket (docs/protocol.md, "A client's life" 2), with
// sealed memfds standing in for dma-buf fds. An input is read two ways, by its first
// byte: as the packet's raw bytes with up to two memfds attached, or as registrations
// built from its bytes — formats known and unknown, sizes, plane counts, offsets and
// strides, memfds of any size, and as many fds as registrations or one more or fewer.
// Now and then a memfd comes without seals. The reply must have one result per registration with its id, and every buffer the
// daemon accepts must hold its layout: a known format, planes that fit the buffer and
// do not overlap (framecl_layout_problem), all within the memfd. Accepted buffers are
// released again, so that the client's limits never fill.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <drm_fourcc.h>
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>

#include "fd_passing.hpp"
#include "framecl/format.h"
#include "fuzz_daemon.hpp"

using namespace framecl;

namespace {

std::unique_ptr<fuzz::Client> client;
constexpr int well_sealed = F_SEAL_SHRINK | F_SEAL_SEAL;

struct Registration {
    uint32_t id;
    framecl_frame_layout layout;
    UniqueFd fd;
    uint64_t fd_size;
};

framecl_frame_layout fuzzedLayout(FuzzedDataProvider& input)
{
    static constexpr uint32_t formats[] = {DRM_FORMAT_R8, DRM_FORMAT_R16, DRM_FORMAT_NV12, DRM_FORMAT_ABGR8888,
                                           DRM_FORMAT_GR88, DRM_FORMAT_YUV420};
    framecl_frame_layout layout{};
    layout.fourcc = input.ConsumeBool() ? input.PickValueInArray(formats) : input.ConsumeIntegral<uint32_t>();
    // Mostly small sizes, which fit a memfd; now and then anything.
    const bool any = input.ConsumeIntegralInRange(0, 7) == 0;
    layout.width = any ? input.ConsumeIntegral<uint32_t>() : input.ConsumeIntegralInRange<uint32_t>(0, 700);
    layout.height = any ? input.ConsumeIntegral<uint32_t>() : input.ConsumeIntegralInRange<uint32_t>(0, 500);
    layout.num_planes = input.ConsumeIntegralInRange<uint32_t>(0, FRAMECL_MAX_PLANES + 1);
    for (uint32_t p = 0; p < FRAMECL_MAX_PLANES; ++p) {
        layout.planes[p].offset = any ? input.ConsumeIntegral<uint32_t>() : input.ConsumeIntegralInRange<uint32_t>(0, 1 << 20);
        layout.planes[p].stride = any ? input.ConsumeIntegral<uint32_t>() : input.ConsumeIntegralInRange<uint32_t>(0, 4096);
    }
    return layout;
}

flatbuffers::Offset<wire::FrameLayout> wireLayout(flatbuffers::FlatBufferBuilder& builder,
                                                  const framecl_frame_layout& layout)
{
    std::vector<wire::Plane> planes;
    for (uint32_t p = 0; p < layout.num_planes; ++p)
        planes.emplace_back(p < FRAMECL_MAX_PLANES ? layout.planes[p].offset : 0,
                            p < FRAMECL_MAX_PLANES ? layout.planes[p].stride : 0);
    return wire::CreateFrameLayoutDirect(builder, layout.fourcc, layout.width, layout.height, &planes);
}

void releaseAll(const std::vector<uint32_t>& ids)
{
    if (ids.empty())
        return;
    const uint32_t request = client->nextRequestId();
    flatbuffers::FlatBufferBuilder builder;
    client->send(protocol::finishEnvelope(builder, wire::CreateReleaseBuffersDirect(builder, request, &ids)));
    std::vector<uint8_t> storage;
    const auto reply = client->replyTo(request);
    if (fuzz::verified(reply, storage).message_type() != wire::Message::Ack)
        fuzz::fail("releasing the buffers it accepted was refused");
}

void registerFuzzed(FuzzedDataProvider& input)
{
    std::vector<Registration> registrations(input.ConsumeIntegralInRange<size_t>(0, 4));
    for (Registration& r : registrations) {
        r.id = input.ConsumeIntegralInRange<uint32_t>(0, 6);
        r.layout = fuzzedLayout(input);
        r.fd_size = input.ConsumeIntegralInRange<uint64_t>(0, 4 << 20);
        r.fd = fuzz::memfd(r.fd_size, input.ConsumeIntegralInRange(0, 7) == 0 ? 0 : well_sealed);
    }
    // As many fds as registrations, or one fewer or one more.
    std::vector<int> fds;
    for (const Registration& r : registrations)
        fds.push_back(r.fd.get());
    const int skew = input.ConsumeIntegralInRange(-1, 1);
    UniqueFd extra = fuzz::memfd(4096, well_sealed);
    if (skew < 0 && !fds.empty())
        fds.pop_back();
    else if (skew > 0)
        fds.push_back(extra.get());

    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<wire::BufferRegistration>> wire_registrations;
    for (const Registration& r : registrations)
        wire_registrations.push_back(wire::CreateBufferRegistration(builder, r.id, wireLayout(builder, r.layout)));
    if (!protocol::sendPacket(client->bufferSocket(),
                              protocol::finishEnvelope(builder, wire::CreateRegisterBuffersDirect(
                                                                    builder, client->token().c_str(), &wire_registrations)),
                              fds))
        fuzz::fail("sending RegisterBuffers");
    const auto packet = client->bufferReply();
    if (!packet)
        fuzz::fail("framecld closed the connection of a well-formed RegisterBuffers");
    std::vector<uint8_t> storage;
    const auto* reply = fuzz::verified(*packet, storage).message_as_RegisterBuffersReply();
    if (!reply)
        fuzz::fail("RegisterBuffers answered by something else than RegisterBuffersReply");
    const auto* results = reply->results();
    if (!results || results->size() != registrations.size())
        fuzz::fail("not one result per registration");

    std::vector<uint32_t> accepted;
    for (size_t i = 0; i < registrations.size(); ++i) {
        const auto* result = results->Get(uint32_t(i));
        const Registration& r = registrations[i];
        if (result->id() != r.id)
            fuzz::fail("a result for another id than the registration's");
        if (result->error())
            continue;
        if (skew != 0)
            fuzz::fail("accepted a buffer of a packet whose fds and registrations do not pair up");
        if (const char* problem = framecl_layout_problem(&r.layout))
            fuzz::fail(std::string("accepted a buffer whose layout is invalid: ") + problem);
        if (framecl_layout_end(&r.layout) > r.fd_size)
            fuzz::fail("accepted a buffer whose layout ends past its fd");
        accepted.push_back(r.id);
    }
    releaseAll(accepted);
}

// Returns whether the client is still connected.
bool sendRaw(FuzzedDataProvider& input)
{
    UniqueFd first = fuzz::memfd(input.ConsumeIntegralInRange<uint32_t>(0, 1 << 20), well_sealed);
    UniqueFd second = fuzz::memfd(4096, well_sealed);
    const int both[] = {first.get(), second.get()};
    const size_t fd_count = input.ConsumeIntegralInRange<size_t>(0, 2);
    const std::vector<uint8_t> bytes = input.ConsumeRemainingBytes<uint8_t>();
    if (!protocol::sendPacket(client->bufferSocket(), bytes, std::span<const int>(both, fd_count)))
        fuzz::fail("sending a raw packet");
    // Answered (a refusal, or the Done of a Submit), or the connection closed: an empty
    // packet reads as the end of the connection on SOCK_SEQPACKET.
    return client->bufferReply().has_value();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    auto& daemon = fuzz::daemon();
    if (!client)
        client = std::make_unique<fuzz::Client>(daemon);
    FuzzedDataProvider input(data, size);
    const bool connected = input.ConsumeBool() ? sendRaw(input) : (registerFuzzed(input), true);
    if (connected != client->answersStats())
        fuzz::fail(connected ? "the client was forgotten" : "the client outlived its buffer socket");
    if (!connected)
        client.reset(); // the next input starts with a new client
    return 0;
}
