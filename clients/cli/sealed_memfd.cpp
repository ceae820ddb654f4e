#include "sealed_memfd.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>

#include <fmt/format.h>

namespace framecl::cli {

Result<UniqueFd> createSealedMemfd(const std::string& name, uint64_t size)
{
    UniqueFd fd(memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid())
        return fail(fmt::format("memfd_create: {}", strerror(errno)));
    if (ftruncate(fd.get(), off_t(size)) != 0)
        return fail(fmt::format("memfd of {} bytes: {}", size, strerror(errno)));
    // No F_SEAL_WRITE: the daemon writes output frames into these buffers. F_SEAL_SEAL
    // keeps anyone holding the fd from adding it later.
    if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return fail(fmt::format("sealing a memfd: {}", strerror(errno)));
    return fd;
}

Result<MemfdMapping> MemfdMapping::map(int fd, uint64_t size)
{
    void* address = mmap(nullptr, size_t(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED)
        return fail(fmt::format("mapping a memfd of {} bytes: {}", size, strerror(errno)));
    return MemfdMapping(address, size_t(size));
}

MemfdMapping::MemfdMapping(MemfdMapping&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)), size_(std::exchange(other.size_, 0))
{
}

MemfdMapping::~MemfdMapping()
{
    if (address_)
        munmap(address_, size_);
}

} // namespace framecl::cli
