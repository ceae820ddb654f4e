#pragma once
// Building and checking Envelopes, the same way on both sides of the wire.

#include <cstdint>
#include <span>
#include <vector>

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
// `bytes`, whatever they hold. FlatBuffers reads each scalar where it lies, so the
// buffer must start at an address aligned for the widest (8 bytes), which a ZeroMQ
// message's data or a short std::string's need not be: unaligned bytes are copied
// into `storage` (a vector's memory comes aligned from operator new) and the Envelope
// read there. It is valid while `bytes` and `storage` are.
inline const wire::Envelope* verifiedEnvelope(std::span<const uint8_t> bytes, std::vector<uint8_t>& storage)
{
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
        storage.assign(bytes.begin(), bytes.end());
        bytes = storage;
    }
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    if (!wire::VerifyEnvelopeBuffer(verifier))
        return nullptr;
    const wire::Envelope* envelope = wire::GetEnvelope(bytes.data());
    if (envelope->message_type() == wire::Message::NONE)
        return nullptr;
    return envelope;
}

} // namespace framecl::protocol
