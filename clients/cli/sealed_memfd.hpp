#pragma once
// Frames handed to framecld live in memfds sealed against shrinking and growing: the
// daemon refuses a memfd without F_SEAL_SHRINK, since a client could otherwise truncate
// it while the GPU reads it and crash the daemon with SIGBUS (docs/protocol.md, Buffer
// checks). Shared by the framecl CLI and framecl-mock-camera.

#include <cstdint>
#include <span>
#include <string>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::cli {

// A memfd of `size` bytes (zeros), sealed with F_SEAL_SHRINK, F_SEAL_GROW and
// F_SEAL_SEAL. Its contents stay writable, through a mapping or pwrite(2).
Result<UniqueFd> createSealedMemfd(const std::string& name, uint64_t size);

// A shared read-write mapping of a whole memfd, unmapped in exactly one place.
class MemfdMapping {
public:
    static Result<MemfdMapping> map(int fd, uint64_t size);

    MemfdMapping(MemfdMapping&& other) noexcept;
    MemfdMapping& operator=(MemfdMapping&&) = delete;
    MemfdMapping(const MemfdMapping&) = delete;
    MemfdMapping& operator=(const MemfdMapping&) = delete;
    ~MemfdMapping();

    std::span<uint8_t> bytes() const { return {static_cast<uint8_t*>(address_), size_}; }

private:
    MemfdMapping(void* address, size_t size) : address_(address), size_(size) {}

    void* address_ = nullptr;
    size_t size_ = 0;
};

} // namespace framecl::cli
