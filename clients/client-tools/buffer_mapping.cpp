#include "buffer_mapping.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/mman.h>

#include <fmt/format.h>

namespace framecl::cli {

Result<BufferMapping> BufferMapping::map(int fd, uint64_t size)
{
    void* address = mmap(nullptr, size_t(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED)
        return fail(fmt::format("mapping a frame buffer of {} bytes: {}", size, strerror(errno)));
    return BufferMapping(address, size_t(size));
}

BufferMapping::BufferMapping(BufferMapping&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)), size_(std::exchange(other.size_, 0))
{
}

BufferMapping::~BufferMapping()
{
    if (address_)
        munmap(address_, size_);
}

} // namespace framecl::cli
