#pragma once
// Building and checking Envelopes, the same way on both sides of the wire.

#include <cstdint>
#include <span>

#include <flatbuffers/flatbuffers.h>

#include "framecl_generated.h"

namespace framecl::protocol {

namespace wire = framecl::wire;

inline constexpr uint32_t protocol_version = static_cast<uint32_t>(wire::ProtocolVersion::Current);

// Finishes `builder` with an Envelope around `message` and returns its bytes (valid
// until the builder is reused or destroyed).
template <typename T>
std::span<const uint8_t> finishEnvelope(flatbuffers::FlatBufferBuilder& builder, flatbuffers::Offset<T> message)
{
    auto envelope = wire::CreateEnvelope(builder, wire::MessageTraits<T>::enum_value, message.Union());
    builder.Finish(envelope);
    return {builder.GetBufferPointer(), builder.GetSize()};
}

// The Envelope in `bytes` if the verifier accepts it, else nullptr. Never reads past
// `bytes`, whatever they hold.
inline const wire::Envelope* verifiedEnvelope(std::span<const uint8_t> bytes)
{
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    if (!wire::VerifyEnvelopeBuffer(verifier))
        return nullptr;
    const wire::Envelope* envelope = wire::GetEnvelope(bytes.data());
    if (envelope->message_type() == wire::Message::NONE)
        return nullptr;
    return envelope;
}

} // namespace framecl::protocol
