#pragma once
// Every string a client sends is checked where it comes in (docs/protocol.md, "Strings"):
// names end up in log lines, in the stats JSON and in traces, so a byte sequence that
// is not UTF-8, a control character or a name of 64 KiB is refused at the request that
// carries it, not discovered when something later prints it.

#include <cstddef>
#include <string_view>

#include "base/result.hpp"

namespace framecl::ipc {

// The most bytes of a client's name (Hello.client_name): it is copied into every
// trace slice and stats entry of the client.
inline constexpr size_t max_client_name_bytes = 64;
// The most bytes of any other string a client sends: a pipeline name, a parameter key
// or value (a token has its own bound, max_token_bytes).
inline constexpr size_t max_client_string_bytes = 256;

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF) without control characters (U+0000-U+001F, U+007F-U+009F), and
// at most `max_bytes` long. The error names `field` and what is wrong with it:
// "Hello.client_name is not UTF-8: byte 3 is 0xff".
Result<void> checkClientText(std::string_view text, std::string_view field, size_t max_bytes);

} // namespace framecl::ipc
