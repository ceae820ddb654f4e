#include "gpu/program_cache_entry.hpp"

#include <cstdint>

#include <xxhash.h>

namespace framecl::gpu {
namespace {

constexpr std::string_view kMagic{"FCLPROG\0", 8};
constexpr uint32_t kFormatVersion = 1;

void putLittleEndian(std::string& out, uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// Reads `bytes` bytes at `offset` and advances it; false when the file is too short.
bool getLittleEndian(std::string_view in, size_t& offset, int bytes, uint64_t& value)
{
    if (in.size() - offset < static_cast<size_t>(bytes))
        return false;
    value = 0;
    for (int i = 0; i < bytes; ++i)
        value |= uint64_t{static_cast<unsigned char>(in[offset + i])} << (8 * i);
    offset += bytes;
    return true;
}

// XXH3-128 in its canonical (big-endian) byte order, the same on every host.
std::string xxh3Digest(std::string_view bytes)
{
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
    return std::string(reinterpret_cast<const char*>(canonical.digest), sizeof(canonical.digest));
}

} // namespace

const char* cacheRejectionName(CacheRejection rejection)
{
    switch (rejection) {
    case CacheRejection::Absent:
        return "absent";
    case CacheRejection::Corrupt:
        return "corrupt";
    case CacheRejection::Foreign:
        return "foreign";
    case CacheRejection::Incompatible:
        return "incompatible";
    case CacheRejection::None:
        break;
    }
    return "none";
}

std::string encodeCacheEntry(std::string_view key, std::string_view binary)
{
    std::string out(kMagic);
    putLittleEndian(out, kFormatVersion, 4);
    putLittleEndian(out, key.size(), 4);
    out += key;
    putLittleEndian(out, binary.size(), 8);
    out += xxh3Digest(binary);
    out += binary;
    return out;
}

tl::expected<std::string_view, CacheRejection> decodeCacheEntry(std::string_view file,
                                                                 std::string_view key)
{
    const auto corrupt = tl::unexpected(CacheRejection::Corrupt);
    if (file.substr(0, kMagic.size()) != kMagic)
        return corrupt;
    size_t offset = kMagic.size();
    uint64_t version = 0, key_length = 0, binary_length = 0;
    if (!getLittleEndian(file, offset, 4, version))
        return corrupt;
    if (version != kFormatVersion)
        return tl::unexpected(CacheRejection::Foreign);
    if (!getLittleEndian(file, offset, 4, key_length) || file.size() - offset < key_length)
        return corrupt;
    if (file.substr(offset, key_length) != key)
        return tl::unexpected(CacheRejection::Foreign);
    offset += key_length;
    if (!getLittleEndian(file, offset, 8, binary_length))
        return corrupt;
    constexpr size_t kChecksumSize = sizeof(XXH128_canonical_t);
    if (file.size() - offset < kChecksumSize || file.size() - offset - kChecksumSize != binary_length)
        return corrupt;
    const std::string_view stored_checksum = file.substr(offset, kChecksumSize);
    const std::string_view binary = file.substr(offset + kChecksumSize);
    if (binary.empty() || xxh3Digest(binary) != stored_checksum)
        return corrupt;
    return binary;
}

std::string xxh3Hex(std::string_view bytes)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char byte : xxh3Digest(bytes)) {
        hex.push_back(kDigits[byte >> 4]);
        hex.push_back(kDigits[byte & 0xf]);
    }
    return hex;
}

} // namespace framecl::gpu
