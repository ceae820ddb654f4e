#include "utf8_text.hpp"

#include <fmt/format.h>

namespace framecl {

size_t utf8SequenceLength(std::string_view text, size_t at, uint32_t& code_point)
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

bool isControlCodePoint(uint32_t code_point)
{
    return code_point < 0x20 || (code_point >= 0x7f && code_point <= 0x9f);
}

std::string escapeText(std::string_view text)
{
    std::string escaped;
    escaped.reserve(text.size());
    for (size_t at = 0; at < text.size();) {
        uint32_t code_point = 0;
        size_t length = utf8SequenceLength(text, at, code_point);
        const bool keep = length > 0 && !isControlCodePoint(code_point) && code_point != '\\';
        if (length == 0)
            length = 1;
        if (keep)
            escaped.append(text.substr(at, length));
        else
            for (size_t i = 0; i < length; ++i)
                escaped += fmt::format("\\x{:02x}", uint8_t(text[at + i]));
        at += length;
    }
    return escaped;
}

} // namespace framecl
