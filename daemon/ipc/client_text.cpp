#include "ipc/client_text.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace framecl::ipc {
namespace {

// The length of the UTF-8 sequence starting at `text[at]`, or 0 where it is not a
// well-formed one (RFC 3629, section 4: the second byte's range depends on the first).
size_t sequenceLength(std::string_view text, size_t at, uint32_t& code_point)
{
    const auto byte = [&](size_t i) { return uint8_t(text[i]); };
    const uint8_t lead = byte(at);
    size_t length = 0;
    uint8_t low = 0x80, high = 0xbf; // the second byte's range
    if (lead < 0x80) {
        code_point = lead;
        return 1;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        code_point = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        code_point = lead & 0x0f;
        low = lead == 0xe0 ? 0xa0 : 0x80;  // no overlong forms
        high = lead == 0xed ? 0x9f : 0xbf; // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        code_point = lead & 0x07;
        low = lead == 0xf0 ? 0x90 : 0x80;  // no overlong forms
        high = lead == 0xf4 ? 0x8f : 0xbf; // nothing past U+10FFFF
    } else {
        return 0;
    }
    if (at + length > text.size())
        return 0;
    for (size_t i = 1; i < length; ++i) {
        const uint8_t next = byte(at + i);
        if (next < (i == 1 ? low : 0x80) || next > (i == 1 ? high : 0xbf))
            return 0;
        code_point = (code_point << 6) | (next & 0x3f);
    }
    return length;
}

bool isControl(uint32_t code_point)
{
    return code_point < 0x20 || (code_point >= 0x7f && code_point <= 0x9f);
}

} // namespace

Result<void> checkClientText(std::string_view text, std::string_view field, size_t max_bytes)
{
    if (text.size() > max_bytes)
        return fail(fmt::format("{} is {} bytes long; at most {}", field, text.size(), max_bytes));
    for (size_t at = 0; at < text.size();) {
        uint32_t code_point = 0;
        const size_t length = sequenceLength(text, at, code_point);
        if (length == 0)
            return fail(fmt::format("{} is not UTF-8: byte {} is {:#04x}", field, at, uint8_t(text[at])));
        if (isControl(code_point))
            return fail(fmt::format("{} holds the control character U+{:04X} at byte {}", field, code_point, at));
        at += length;
    }
    return {};
}

} // namespace framecl::ipc
