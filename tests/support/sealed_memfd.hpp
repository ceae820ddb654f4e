#pragma once
// Real sealed memfds, the dma-buf stand-in of tests: what a camera process without a
// dma-buf heap hands framecld.

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/unique_fd.hpp"

namespace framecl::test {

enum class Seal { Shrink, None };

// A memfd of `size` bytes holding `contents` (zeros after them), sealed against
// shrinking unless told otherwise.
inline UniqueFd makeMemfd(size_t size, std::span<const uint8_t> contents = {}, Seal seal = Seal::Shrink)
{
    UniqueFd fd(memfd_create("framecl-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid() || ftruncate(fd.get(), off_t(size)) != 0)
        throw std::runtime_error("memfd_create/ftruncate failed");
    if (!contents.empty() && pwrite(fd.get(), contents.data(), contents.size(), 0) != ssize_t(contents.size()))
        throw std::runtime_error("pwrite to memfd failed");
    if (seal == Seal::Shrink && fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        throw std::runtime_error("F_ADD_SEALS failed");
    return fd;
}

inline std::vector<uint8_t> readMemfd(int fd, size_t size)
{
    std::vector<uint8_t> bytes(size);
    if (pread(fd, bytes.data(), size, 0) != ssize_t(size))
        throw std::runtime_error("pread from memfd failed");
    return bytes;
}

} // namespace framecl::test
