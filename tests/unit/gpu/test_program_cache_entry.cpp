#include <doctest/doctest.h>

#include "gpu/program_cache_entry.hpp"

using namespace framecl::gpu;

namespace {

const std::string kKey = "device: X\ndriver: 1\nsource: abc\noptions: \n";
const std::string kBinary = "\x7f" "ELF pretend binary";

} // namespace

TEST_CASE("an encoded entry decodes to its binary under the same key")
{
    const std::string file = encodeCacheEntry(kKey, kBinary);
    auto binary = decodeCacheEntry(file, kKey);
    REQUIRE(binary.has_value());
    CHECK(*binary == kBinary);
}

TEST_CASE("an entry decoded under another key is foreign")
{
    auto binary = decodeCacheEntry(encodeCacheEntry(kKey, kBinary), "device: Y\n");
    REQUIRE_FALSE(binary.has_value());
    CHECK(binary.error() == CacheRejection::Foreign);
}

TEST_CASE("an entry of another format version is foreign")
{
    std::string file = encodeCacheEntry(kKey, kBinary);
    file[8] = 2; // the format version follows the 8-byte magic
    CHECK(decodeCacheEntry(file, kKey).error() == CacheRejection::Foreign);
}

TEST_CASE("a flipped byte in the binary is corrupt")
{
    std::string file = encodeCacheEntry(kKey, kBinary);
    file.back() ^= 0x01;
    CHECK(decodeCacheEntry(file, kKey).error() == CacheRejection::Corrupt);
}

TEST_CASE("a truncated entry is corrupt at every length")
{
    const std::string file = encodeCacheEntry(kKey, kBinary);
    for (size_t length = 0; length < file.size(); ++length)
        CHECK(decodeCacheEntry(std::string_view(file).substr(0, length), kKey).error() == CacheRejection::Corrupt);
}

TEST_CASE("a file with bytes appended is corrupt")
{
    CHECK(decodeCacheEntry(encodeCacheEntry(kKey, kBinary) + "x", kKey).error() == CacheRejection::Corrupt);
}

TEST_CASE("the hex hash is 32 lowercase digits as xxhsum prints them")
{
    // `printf '' | xxhsum -H2` prints 99aa06d3014798d86001c324468d497f.
    CHECK(xxh3Hex("") == "99aa06d3014798d86001c324468d497f");
}
