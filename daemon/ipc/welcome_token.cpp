#include "ipc/welcome_token.hpp"

#include <cstring>
#include <vector>

#include <sodium.h>

#include <fmt/format.h>

namespace framecl::ipc {
namespace {

// The signed bytes: the issue time (steady clock, ns, little-endian), the routing id's
// length and the routing id, then the name.
std::vector<uint8_t> claimBytes(const WelcomeClaims& claims)
{
    std::vector<uint8_t> bytes;
    const auto issued = uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(claims.issued.time_since_epoch()).count());
    for (int i = 0; i < 8; ++i)
        bytes.push_back(uint8_t(issued >> (8 * i)));
    bytes.push_back(uint8_t(claims.identity.size()));
    bytes.insert(bytes.end(), claims.identity.begin(), claims.identity.end());
    bytes.insert(bytes.end(), claims.name.begin(), claims.name.end());
    return bytes;
}

int hexDigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

} // namespace

Result<WelcomeTokens> WelcomeTokens::create()
{
    // Safe to call more than once; it fails only where the system offers no entropy.
    if (sodium_init() < 0)
        return fail("libsodium could not be initialised: no key for the Welcome's tokens");
    WelcomeTokens tokens;
    crypto_auth_keygen(tokens.key_.data());
    return tokens;
}

std::string WelcomeTokens::issue(const WelcomeClaims& claims) const
{
    std::vector<uint8_t> bytes = claimBytes(claims);
    std::array<uint8_t, crypto_auth_BYTES> mac{};
    crypto_auth(mac.data(), bytes.data(), bytes.size(), key_.data());
    bytes.insert(bytes.end(), mac.begin(), mac.end());
    std::string token;
    token.reserve(2 * bytes.size());
    for (uint8_t byte : bytes)
        token += fmt::format("{:02x}", byte);
    return token;
}

Result<WelcomeClaims> WelcomeTokens::verify(std::string_view token, std::chrono::steady_clock::time_point now,
                                            std::chrono::steady_clock::duration lifetime) const
{
    const auto malformed = fail("unknown token: say Hello on the ZeroMQ socket first");
    if (token.size() % 2 != 0 || token.size() > max_token_bytes)
        return malformed;
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < token.size(); i += 2) {
        const int high = hexDigit(token[i]), low = hexDigit(token[i + 1]);
        if (high < 0 || low < 0)
            return malformed;
        bytes.push_back(uint8_t(high << 4 | low));
    }
    if (bytes.size() < 9 + crypto_auth_BYTES || bytes.size() < 9 + size_t(bytes[8]) + crypto_auth_BYTES)
        return malformed;
    const size_t signed_bytes = bytes.size() - crypto_auth_BYTES;
    if (crypto_auth_verify(bytes.data() + signed_bytes, bytes.data(), signed_bytes, key_.data()) != 0)
        return malformed; // not ours: another framecld's (before a restart), or made up
    uint64_t issued_ns = 0;
    for (int i = 0; i < 8; ++i)
        issued_ns |= uint64_t(bytes[i]) << (8 * i);
    WelcomeClaims claims;
    claims.issued = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(issued_ns));
    const size_t identity_bytes = bytes[8];
    claims.identity.assign(bytes.begin() + 9, bytes.begin() + 9 + ptrdiff_t(identity_bytes));
    claims.name.assign(bytes.begin() + 9 + ptrdiff_t(identity_bytes), bytes.begin() + ptrdiff_t(signed_bytes));
    if (now - claims.issued > lifetime)
        return fail(fmt::format("the Welcome's token expired: bind within {} s of the Welcome, or say Hello again",
                                std::chrono::duration_cast<std::chrono::seconds>(lifetime).count()));
    return claims;
}

} // namespace framecl::ipc
