#pragma once
// The on-disk format of one program-cache entry, apart from any file or OpenCL call:
//
//   offset  size  field
//   0       8     magic "FCLPROG\0"
//   8       4     format version (little endian)
//   12      4     key length K (little endian)
//   16      K     key text
//   16+K    8     binary length B (little endian)
//   24+K    16    XXH3-128 of the binary (canonical, big endian)
//   40+K    B     binary
//
// The full key is stored, not only its hash in the file name, so an entry copied from
// another device or whose name collides is told apart from a good one.

#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace framecl::gpu {

enum class CacheRejection {
    None,         // the entry was used, or there is no usable cache directory
    Absent,       // no entry yet
    Corrupt,      // truncated, bad magic, bad lengths or checksum mismatch
    Foreign,      // another key (device, driver, source, options) or format version
    Incompatible, // intact, but the driver refused the binary (guide §5.7.4)
};

// "none", "absent", "corrupt", "foreign", "incompatible".
const char* cacheRejectionName(CacheRejection rejection);

std::string encodeCacheEntry(std::string_view key, std::string_view binary);

// The binary inside `file` when it is intact and made for `key`; else Corrupt or Foreign.
tl::expected<std::string_view, CacheRejection> decodeCacheEntry(std::string_view file,
                                                                 std::string_view key);

// Lowercase hex of XXH3-128, as xxhsum prints it.
std::string xxh3Hex(std::string_view bytes);

} // namespace framecl::gpu
