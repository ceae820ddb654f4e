// protocol::verifiedEnvelope on bytes at any address: FlatBuffers reads scalars in
// place, so bytes that do not start 8-byte aligned (a ZeroMQ message's data may not)
// are read from an aligned copy, and give the same message.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "envelope.hpp"

using namespace framecl;

TEST_CASE("an Envelope at an unaligned address is read from an aligned copy, with the same fields")
{
    flatbuffers::FlatBufferBuilder builder;
    const auto bytes = protocol::finishEnvelope(builder, wire::CreateSubmit(builder, 3, 7, 9, 0x1122334455667788));
    // The same bytes at every offset 0 to 7 from an 8-byte boundary.
    std::vector<uint64_t> backing(bytes.size() / 8 + 2);
    for (size_t offset = 0; offset < 8; ++offset) {
        CAPTURE(offset);
        auto* at = reinterpret_cast<uint8_t*>(backing.data()) + offset;
        std::copy(bytes.begin(), bytes.end(), at);
        std::vector<uint8_t> storage;
        const wire::Envelope* envelope = protocol::verifiedEnvelope({at, bytes.size()}, storage);
        REQUIRE(envelope != nullptr);
        const wire::Submit* submit = envelope->message_as_Submit();
        REQUIRE(submit != nullptr);
        CHECK(submit->session() == 3);
        CHECK(submit->input_buffer() == 7);
        CHECK(submit->output_buffer() == 9);
        CHECK(submit->sequence() == 0x1122334455667788);
        CHECK(storage.empty() == (offset == 0)); // copied only where unaligned
    }
}

TEST_CASE("bytes that are no Envelope are refused at any address")
{
    std::vector<uint64_t> backing(8, 0xffffffffffffffff);
    std::vector<uint8_t> storage;
    for (size_t offset = 0; offset < 8; ++offset)
        CHECK(protocol::verifiedEnvelope({reinterpret_cast<uint8_t*>(backing.data()) + offset, 40}, storage) ==
              nullptr);
}
