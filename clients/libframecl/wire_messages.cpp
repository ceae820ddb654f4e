#include "wire_messages.hpp"

#include <algorithm>
#include <cstring>

namespace framecl::clientlib {

namespace {

using protocol::finishEnvelope;

flatbuffers::Offset<wire::FrameLayout> wireLayout(Builder& builder,
                                                  const framecl_frame_layout& layout)
{
    std::vector<wire::Plane> planes;
    for (uint32_t p = 0; p < std::min<uint32_t>(layout.num_planes, FRAMECL_MAX_PLANES); ++p)
        planes.emplace_back(layout.planes[p].offset, layout.planes[p].stride);
    return wire::CreateFrameLayoutDirect(builder, layout.fourcc, layout.width, layout.height,
                                         &planes);
}

flatbuffers::Offset<wire::Parameter> wireParameter(Builder& builder,
                                                   const ParameterOverride& parameter)
{
    const auto key = builder.CreateString(parameter.key);
    switch (parameter.type) {
    case FRAMECL_PARAM_INT:
        return wire::CreateParameter(builder, key, parameter.int_value);
    case FRAMECL_PARAM_FLOAT:
        return wire::CreateParameter(builder, key, flatbuffers::nullopt, parameter.float_value);
    case FRAMECL_PARAM_BOOL:
        return wire::CreateParameter(builder, key, flatbuffers::nullopt, flatbuffers::nullopt,
                                     parameter.bool_value);
    case FRAMECL_PARAM_STRING:
        break;
    }
    const auto value = builder.CreateString(parameter.string_value);
    return wire::CreateParameter(builder, key, flatbuffers::nullopt, flatbuffers::nullopt,
                                 flatbuffers::nullopt, value);
}

// Spelled out rather than cast: the C enum is ABI and the wire enum is protocol, and
// neither may follow the other by accident. The C API has refused other values.
wire::Backpressure wireBackpressure(framecl_backpressure backpressure)
{
    switch (backpressure) {
    case FRAMECL_BACKPRESSURE_REJECT:
        return wire::Backpressure::Reject;
    case FRAMECL_BACKPRESSURE_DROP_OLDEST:
        return wire::Backpressure::DropOldest;
    case FRAMECL_BACKPRESSURE_BLOCK:
        break;
    }
    return wire::Backpressure::Block;
}

// Copies as much of `source` as fits, always NUL-terminated: the C structs have fixed
// text fields.
template <size_t N> void copyText(char (&target)[N], const flatbuffers::String* source)
{
    const size_t length = source ? std::min<size_t>(source->size(), N - 1) : 0;
    if (length) std::memcpy(target, source->data(), length);
    target[length] = '\0';
}

} // namespace

std::span<const uint8_t> helloMessage(Builder& builder, std::string_view client_name)
{
    const auto name = builder.CreateString(client_name.data(), client_name.size());
    return finishEnvelope(builder, wire::CreateHello(builder, protocol::protocol_version, name));
}

std::span<const uint8_t> goodbyeMessage(Builder& builder)
{
    return finishEnvelope(builder, wire::CreateGoodbye(builder));
}

std::span<const uint8_t> registerBuffersMessage(Builder& builder, std::string_view token,
                                                std::span<const BufferRegistration> buffers)
{
    std::vector<flatbuffers::Offset<wire::BufferRegistration>> registrations;
    for (const auto& buffer : buffers)
        registrations.push_back(
            wire::CreateBufferRegistration(builder, buffer.id, wireLayout(builder, buffer.layout)));
    const auto token_string = builder.CreateString(token.data(), token.size());
    return finishEnvelope(builder, wire::CreateRegisterBuffers(
                                       builder, token_string, builder.CreateVector(registrations)));
}

std::span<const uint8_t> releaseBuffersMessage(Builder& builder, uint32_t request_id,
                                               uint32_t buffer)
{
    const std::vector<uint32_t> ids{buffer};
    return finishEnvelope(builder, wire::CreateReleaseBuffersDirect(builder, request_id, &ids));
}

std::span<const uint8_t> openSessionMessage(Builder& builder, uint32_t request_id,
                                            const SessionRequest& request)
{
    std::vector<flatbuffers::Offset<wire::Parameter>> overrides;
    for (const auto& parameter : request.overrides)
        overrides.push_back(wireParameter(builder, parameter));
    const auto pipeline = builder.CreateString(request.pipeline);
    const auto input =
        wire::CreateFrameLayout(builder, request.fourcc, request.width, request.height);
    return finishEnvelope(
        builder, wire::CreateOpenSession(builder, request_id, pipeline, input,
                                         builder.CreateVector(overrides),
                                         wireBackpressure(request.options.backpressure),
                                         request.options.deadline_us));
}

std::span<const uint8_t> closeSessionMessage(Builder& builder, uint32_t request_id,
                                             uint32_t session)
{
    return finishEnvelope(builder, wire::CreateCloseSession(builder, request_id, session));
}

std::span<const uint8_t> statsRequestMessage(Builder& builder, uint32_t request_id)
{
    return finishEnvelope(builder, wire::CreateStatsRequest(builder, request_id));
}

std::span<const uint8_t> traceRequestMessage(Builder& builder, uint32_t request_id,
                                             uint32_t seconds)
{
    return finishEnvelope(builder, wire::CreateTraceRequest(builder, request_id, seconds));
}

std::span<const uint8_t> submitMessage(Builder& builder, uint32_t session, uint32_t input_buffer,
                                       uint32_t output_buffer, uint64_t sequence, bool acquire_fence,
                                       bool release_fence, std::span<const FrameParameterValues> parameters)
{
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::FrameParameter>>> changes;
    if (!parameters.empty()) {
        std::vector<flatbuffers::Offset<wire::FrameParameter>> built;
        for (const FrameParameterValues& parameter : parameters)
            built.push_back(wire::CreateFrameParameter(
                builder, parameter.stage, builder.CreateString(parameter.key),
                builder.CreateVector(parameter.values.data(), parameter.values.size())));
        changes = builder.CreateVector(built);
    }
    return finishEnvelope(builder,
                          wire::CreateSubmit(builder, session, input_buffer, output_buffer,
                                             sequence, acquire_fence, release_fence, changes));
}

std::optional<uint32_t> replyRequestId(const wire::Envelope& envelope)
{
    switch (envelope.message_type()) {
    case wire::Message::SessionOpened:
        return envelope.message_as_SessionOpened()->request_id();
    case wire::Message::Ack:
        return envelope.message_as_Ack()->request_id();
    case wire::Message::StatsReply:
        return envelope.message_as_StatsReply()->request_id();
    case wire::Message::TraceReply:
        return envelope.message_as_TraceReply()->request_id();
    case wire::Message::ErrorReply:
        return envelope.message_as_ErrorReply()->request_id();
    default:
        return std::nullopt;
    }
}

framecl_done doneFromWire(const wire::Done& done, uint32_t session)
{
    framecl_done result{};
    result.session = session;
    result.sequence = done.sequence();
    // A status this library does not know yet came from a newer daemon; the frame
    // did not come back as asked, which is what "failed" tells the application.
    result.status = done.status() > wire::FrameStatus::MAX
                        ? FRAMECL_FRAME_FAILED
                        : static_cast<framecl_frame_status>(done.status());
    copyText(result.error, done.error());
    result.queued_ns = done.queued_ns();
    result.start_ns = done.start_ns();
    result.end_ns = done.end_ns();
    result.gpu_end_ns = done.gpu_end_ns();
    result.callback_ns = done.callback_ns();
    if (const auto* stages = done.stages()) {
        result.stage_count = std::min<uint32_t>(stages->size(), FRAMECL_MAX_STAGES);
        for (uint32_t s = 0; s < result.stage_count; ++s) {
            copyText(result.stages[s].stage, stages->Get(s)->stage());
            result.stages[s].gpu_ns = stages->Get(s)->gpu_ns();
        }
    }
    return result;
}

std::optional<framecl_statistics> statisticsFromWire(const wire::Done& done)
{
    const wire::FrameStatistics* in = done.statistics();
    framecl_statistics out{};
    const auto copy = [](const flatbuffers::Vector<uint32_t>* from, auto& to) {
        if (!from || from->size() != sizeof to / sizeof(uint32_t)) return false;
        std::copy(from->begin(), from->end(), reinterpret_cast<uint32_t*>(&to));
        return true;
    };
    if (!in || in->zones_x() != FRAMECL_STATISTICS_ZONES_X || in->zones_y() != FRAMECL_STATISTICS_ZONES_Y ||
        !copy(in->sums(), out.sums) || !copy(in->counts(), out.counts) || !copy(in->histogram(), out.histogram))
        return std::nullopt;
    return out;
}

framecl_done lostDone(uint32_t session, uint64_t sequence)
{
    framecl_done result{};
    result.session = session;
    result.sequence = sequence;
    result.status = FRAMECL_FRAME_LOST;
    std::strncpy(result.error, "framecld went away; the frame was lost", sizeof result.error - 1);
    return result;
}

framecl_frame_layout outputLayout(const wire::FrameLayout* layout)
{
    framecl_frame_layout result{};
    if (!layout) return result;
    if (framecl_packed_layout(layout->fourcc(), layout->width(), layout->height(), &result))
        return result;
    result = framecl_frame_layout{layout->fourcc(), layout->width(), layout->height(), 0, {}};
    if (const auto* planes = layout->planes()) {
        result.num_planes = std::min<uint32_t>(planes->size(), FRAMECL_MAX_PLANES);
        for (uint32_t p = 0; p < result.num_planes; ++p)
            result.planes[p] = {planes->Get(p)->offset(), planes->Get(p)->stride()};
    }
    return result;
}

} // namespace framecl::clientlib
