#include "ipc/client_text.hpp"

#include <fmt/format.h>

#include "base/utf8_text.hpp"

namespace framecl::ipc {

Result<void> checkClientText(std::string_view text, std::string_view field, size_t max_bytes)
{
    if (text.size() > max_bytes)
        return fail(fmt::format("{} is {} bytes long; at most {}", field, text.size(), max_bytes));
    for (size_t at = 0; at < text.size();) {
        uint32_t code_point = 0;
        const size_t length = utf8SequenceLength(text, at, code_point);
        if (length == 0)
            return fail(fmt::format("{} is not UTF-8: byte {} is {:#04x}", field, at, uint8_t(text[at])));
        if (isControlCodePoint(code_point))
            return fail(fmt::format("{} holds the control character U+{:04X} at byte {}", field, code_point, at));
        at += length;
    }
    return {};
}

} // namespace framecl::ipc
