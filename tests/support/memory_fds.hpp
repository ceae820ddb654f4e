#pragma once
// Real file descriptors of the kinds a client could register as buffers: memfds,
// sealed or not (memfd_create(2)), and a shared mapping to read and write them by.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "base/unique_fd.hpp"

namespace framecl::test {

// A memfd of `size` bytes named `name` in /proc ("/memfd:<name> (deleted)"), with
// `seals` added where non-zero.
inline UniqueFd namedMemfd(const char* name, off_t size, int seals)
{
    UniqueFd fd(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    REQUIRE_MESSAGE(fd.valid(), "memfd_create: " << std::string(std::strerror(errno)));
    REQUIRE(ftruncate(fd.get(), size) == 0);
    if (seals != 0)
        REQUIRE_MESSAGE(fcntl(fd.get(), F_ADD_SEALS, seals) == 0,
                        "F_ADD_SEALS: " << std::string(std::strerror(errno)));
    return fd;
}

// What a well-behaved client sends: it may not shrink the buffer, nor change the seals.
inline UniqueFd sealedMemfd(const char* name, off_t size)
{
    return namedMemfd(name, size, F_SEAL_SHRINK | F_SEAL_SEAL);
}

// The first `size` bytes of an fd, read without a mapping.
inline std::vector<uint8_t> readMemfd(int fd, size_t size)
{
    std::vector<uint8_t> bytes(size);
    REQUIRE(pread(fd, bytes.data(), size, 0) == ssize_t(size));
    return bytes;
}

// Another fd of the same open file, as SCM_RIGHTS hands one to the daemon while the
// client keeps its own.
inline UniqueFd duplicate(const UniqueFd& fd)
{
    UniqueFd copy(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
    REQUIRE_MESSAGE(copy.valid(), "F_DUPFD_CLOEXEC: " << std::string(std::strerror(errno)));
    return copy;
}

// A read-write shared mapping of a whole fd, unmapped at scope exit: the client's view.
class SharedMapping {
  public:
    SharedMapping(int fd, size_t size) : size_(size)
    {
        data_ = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        REQUIRE_MESSAGE(data_ != MAP_FAILED, "mmap: " << std::string(std::strerror(errno)));
    }
    ~SharedMapping() { munmap(data_, size_); }
    SharedMapping(const SharedMapping&) = delete;
    SharedMapping& operator=(const SharedMapping&) = delete;

    unsigned char* bytes() const { return static_cast<unsigned char*>(data_); }

  private:
    void* data_ = nullptr;
    size_t size_;
};

} // namespace framecl::test
