#pragma once
// The messages libframecl sends, built from its own records, and the conversions of
// what the daemon sends back into the C API's structs (protocol/framecl.fbs).

#include "envelope.hpp"
#include "framecl/client.h"

#include <cstdint>
#include <flatbuffers/flatbuffers.h>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace framecl::clientlib {

namespace wire = framecl::wire;

// A pipeline parameter override, owned, so that a session can be opened again after a
// daemon restart.
struct ParameterOverride {
    std::string key;
    framecl_parameter_type type;
    int64_t int_value;
    double float_value;
    bool bool_value;
    std::string string_value;
};

// What OpenSession asks for; kept for the session's lifetime for the same reason.
struct SessionRequest {
    std::string pipeline;
    uint32_t fourcc;
    uint32_t width;
    uint32_t height;
    std::vector<ParameterOverride> overrides;
    framecl_session_options options{FRAMECL_BACKPRESSURE_BLOCK, 0};
};

struct BufferRegistration {
    uint32_t id;
    framecl_frame_layout layout;
};

// Each builds its message into `builder` and returns the Envelope's bytes, valid until
// the builder is reused.
using Builder = flatbuffers::FlatBufferBuilder;
std::span<const uint8_t> helloMessage(Builder& builder, std::string_view client_name);
std::span<const uint8_t> goodbyeMessage(Builder& builder);
std::span<const uint8_t> registerBuffersMessage(Builder& builder, std::string_view token,
                                                std::span<const BufferRegistration> buffers);
std::span<const uint8_t> releaseBuffersMessage(Builder& builder, uint32_t request_id,
                                               uint32_t buffer);
std::span<const uint8_t> openSessionMessage(Builder& builder, uint32_t request_id,
                                            const SessionRequest& request);
std::span<const uint8_t> closeSessionMessage(Builder& builder, uint32_t request_id,
                                             uint32_t session);
std::span<const uint8_t> statsRequestMessage(Builder& builder, uint32_t request_id);
std::span<const uint8_t> traceRequestMessage(Builder& builder, uint32_t request_id,
                                             uint32_t seconds);
// A parameter a Submit changes (framecl_frame_parameter), viewed.
struct FrameParameterValues {
    uint32_t stage;
    std::string_view key;
    std::span<const double> values;
};

// `acquire_fence`: the packet will carry one, a sync_file. `release_fence`: asks for one.
std::span<const uint8_t> submitMessage(Builder& builder, uint32_t session, uint32_t input_buffer,
                                       uint32_t output_buffer, uint64_t sequence, bool acquire_fence,
                                       bool release_fence, std::span<const FrameParameterValues> parameters);

// The request_id a reply repeats, or nothing for a message that answers no request.
std::optional<uint32_t> replyRequestId(const wire::Envelope& envelope);

// A Done as the application sees it: under the application's session id.
framecl_done doneFromWire(const wire::Done& done, uint32_t session);
// The statistics a Done carries, where they have the grid of framecl/statistics.h.
std::optional<framecl_statistics> statisticsFromWire(const wire::Done& done);
// The Done of a frame that was in flight when the daemon went away.
framecl_done lostDone(uint32_t session, uint64_t sequence);

// SessionOpened's output layout with tightly packed planes (framecl_packed_layout);
// for a format this library does not know, the planes the daemon sent.
framecl_frame_layout outputLayout(const wire::FrameLayout* layout);

// Text of a FlatBuffers string that may be absent.
inline std::string text(const flatbuffers::String* string)
{
    return string ? string->str() : std::string();
}

} // namespace framecl::clientlib
