#pragma once
// UTF-8 as framecl reads it from clients: the daemon refuses a client's string that is
// not well-formed or holds a control character (ipc::checkClientText), and escapes text
// it did not receive as a string but that a client chose all the same (the name of a
// file whose fd it passed) before a log line or a reply carries it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace framecl {

// The length of the UTF-8 sequence starting at `text[at]`, with its code point, or 0
// where it is not a well-formed one (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF).
size_t utf8SequenceLength(std::string_view text, size_t at, uint32_t& code_point);

// U+0000-U+001F and U+007F-U+009F: what would end or forge a log line.
bool isControlCodePoint(uint32_t code_point);

// `text` with every byte that is not part of a well-formed sequence, every control
// character and every backslash written as \xNN (each byte of it), so that the result is
// valid UTF-8 on one line and tells apart what was escaped from what was not.
std::string escapeText(std::string_view text);

} // namespace framecl
