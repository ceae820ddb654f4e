#pragma once
// A frame buffer's pages as this process sees them: a shared read-write mapping of its
// fd (a memfd or a dma-buf), unmapped in exactly one place. Shared by the framecl CLI,
// framecl-mock-camera and framecl-transport-bench.

#include <cstdint>
#include <span>

#include "base/result.hpp"

namespace framecl::cli {

class BufferMapping {
public:
    static Result<BufferMapping> map(int fd, uint64_t size);

    BufferMapping(BufferMapping&& other) noexcept;
    BufferMapping& operator=(BufferMapping&&) = delete;
    BufferMapping(const BufferMapping&) = delete;
    BufferMapping& operator=(const BufferMapping&) = delete;
    ~BufferMapping();

    std::span<uint8_t> bytes() const { return {static_cast<uint8_t*>(address_), size_}; }

private:
    BufferMapping(void* address, size_t size) : address_(address), size_(size) {}

    void* address_ = nullptr;
    size_t size_ = 0;
};

} // namespace framecl::cli
