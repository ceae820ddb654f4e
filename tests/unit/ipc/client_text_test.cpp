// The door check on strings a client sends (daemon/ipc/client_text.hpp), against
// sequences written out by hand from RFC 3629's table of well-formed UTF-8.
#include <string>

#include <doctest/doctest.h>

#include "ipc/client_text.hpp"

using framecl::ipc::checkClientText;

namespace {

std::string errorOf(std::string_view text, size_t max_bytes = 64)
{
    const auto checked = checkClientText(text, "Hello.client_name", max_bytes);
    return checked ? "" : checked.error().message;
}

} // namespace

TEST_CASE("ASCII names and well-formed multi-byte UTF-8 are accepted")
{
    CHECK(errorOf("") == "");
    CHECK(errorOf("camera-0 (rear)") == "");
    CHECK(errorOf("caméra") == "");                // U+00E9: 2 bytes
    CHECK(errorOf("\xe3\x82\xab\xe3\x83\xa1\xe3\x83\xa9") == ""); // katakana: 3 bytes each
    CHECK(errorOf("\xf0\x9f\x93\xb7") == "");      // U+1F4F7: 4 bytes
    CHECK(errorOf("\xf4\x8f\xbf\xbf") == "");      // U+10FFFF, the last code point
    CHECK(errorOf("\xed\x9f\xbf") == "");          // U+D7FF, just below the surrogates
}

TEST_CASE("bytes that are not UTF-8 are refused with the field, the byte and its offset")
{
    CHECK(errorOf("bad\xff\xfename") == "Hello.client_name is not UTF-8: byte 3 is 0xff");
    CHECK(errorOf("\x80") == "Hello.client_name is not UTF-8: byte 0 is 0x80");        // a lone continuation
    CHECK(errorOf("ab\xc3") == "Hello.client_name is not UTF-8: byte 2 is 0xc3");      // cut short
    CHECK(errorOf("\xc3(") == "Hello.client_name is not UTF-8: byte 0 is 0xc3");       // no continuation
    CHECK(errorOf("\xc0\xaf") == "Hello.client_name is not UTF-8: byte 0 is 0xc0");    // overlong '/'
    CHECK(errorOf("\xe0\x80\xaf") == "Hello.client_name is not UTF-8: byte 0 is 0xe0"); // overlong, 3 bytes
    CHECK(errorOf("\xed\xa0\x80") == "Hello.client_name is not UTF-8: byte 0 is 0xed"); // U+D800, a surrogate
    CHECK(errorOf("\xf4\x90\x80\x80") == "Hello.client_name is not UTF-8: byte 0 is 0xf4"); // past U+10FFFF
    CHECK(errorOf("\xf5\x80\x80\x80") == "Hello.client_name is not UTF-8: byte 0 is 0xf5");
}

TEST_CASE("control characters are refused: they would forge log lines")
{
    CHECK(errorOf("cam\nframecld: fake line") == "Hello.client_name holds the control character U+000A at byte 3");
    CHECK(errorOf(std::string("a\0b", 3)) == "Hello.client_name holds the control character U+0000 at byte 1");
    CHECK(errorOf("\x1b[31mred") == "Hello.client_name holds the control character U+001B at byte 0");
    CHECK(errorOf("del\x7f") == "Hello.client_name holds the control character U+007F at byte 3");
    CHECK(errorOf("c1\xc2\x85") == "Hello.client_name holds the control character U+0085 at byte 2"); // NEL
}

TEST_CASE("a string over its length limit is refused with both lengths")
{
    CHECK(errorOf(std::string(64, 'a')) == "");
    CHECK(errorOf(std::string(65, 'a')) == "Hello.client_name is 65 bytes long; at most 64");
    CHECK(errorOf(std::string(65536, 'a'), 256) == "Hello.client_name is 65536 bytes long; at most 256");
}
