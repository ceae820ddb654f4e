#pragma once
// The token a Welcome gives and a RegisterBuffers brings back (docs/protocol.md,
// "A client's life"). Hello is anonymous: anyone who reaches the ZeroMQ socket may say it,
// and only the buffer socket shows who the peer is. So a Hello costs framecld no
// state: what binding needs — the client's ZeroMQ routing id, its name, when the
// token was given — travels in the token itself, signed with a key framecld draws
// at start (HMAC-SHA-512-256, libsodium's crypto_auth). A flood of Hellos then fills
// no table and pushes no real client out between its Welcome and its bind.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace framecl::ipc {

// What a token says.
struct WelcomeClaims {
    std::string identity; // the ZeroMQ routing id of the client's DEALER socket
    std::string name;     // Hello.client_name, checked when the Hello came
    std::chrono::steady_clock::time_point issued;
};

// The longest token: a routing id of 255 bytes and a name of 64, in hex, with the time
// and the signature.
inline constexpr size_t max_token_bytes = 2 * (8 + 1 + 255 + 64 + 32);

class WelcomeTokens {
public:
    // Draws the key; fails only where libsodium cannot start (no entropy source).
    static Result<WelcomeTokens> create();

    std::string issue(const WelcomeClaims& claims) const;
    // The claims of a token this key signed within `lifetime` before `now`; an error
    // saying what is wrong otherwise (malformed, forged, expired).
    Result<WelcomeClaims> verify(std::string_view token, std::chrono::steady_clock::time_point now,
                                 std::chrono::steady_clock::duration lifetime) const;

private:
    WelcomeTokens() = default;
    std::array<uint8_t, 32> key_{};
};

} // namespace framecl::ipc
