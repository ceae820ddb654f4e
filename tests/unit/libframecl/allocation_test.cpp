// framecl_allocate_buffer and the CPU-access calls on this machine, which has neither a
// DMA-BUF heap nor vgem: memfds, and the errors for what is absent. Real dma-bufs from
// vgem are allocated in the vm suite (tests/vm/dmabuf_test.cpp).
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <framecl/client.h>

#include "base/unique_fd.hpp"

using framecl::UniqueFd;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("a memfd comes sealed as the daemon requires, zeroed, of the size asked")
{
    const framecl_allocate_options options{FRAMECL_BUFFERS_MEMFD, nullptr};
    framecl_buffer_source used = FRAMECL_BUFFERS_AUTO;
    const UniqueFd fd(framecl_allocate_buffer(&options, 12345, &used));
    REQUIRE(fd.valid());
    CHECK(used == FRAMECL_BUFFERS_MEMFD);
    struct stat st {};
    REQUIRE(fstat(fd.get(), &st) == 0);
    CHECK(st.st_size == 12345);
    CHECK(fcntl(fd.get(), F_GET_SEALS) == (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
    CHECK((fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
    unsigned char byte = 1;
    CHECK(pread(fd.get(), &byte, 1, 12344) == 1);
    CHECK(byte == 0);
}

TEST_CASE("auto takes the system heap where there is one, else a memfd")
{
    framecl_buffer_source used = FRAMECL_BUFFERS_AUTO;
    const UniqueFd fd(framecl_allocate_buffer(nullptr, 4096, &used));
    REQUIRE(fd.valid());
    CHECK(used == (access("/dev/dma_heap/system", F_OK) == 0 ? FRAMECL_BUFFERS_DMA_HEAP : FRAMECL_BUFFERS_MEMFD));
}

TEST_CASE("a heap or DRM node that is not there is an error naming it")
{
    const framecl_allocate_options heap{FRAMECL_BUFFERS_DMA_HEAP, "no-such-heap"};
    CHECK(framecl_allocate_buffer(&heap, 4096, nullptr) == -ENOENT);
    CHECK(contains(framecl_last_error(nullptr), "/dev/dma_heap/no-such-heap: No such file or directory"));

    const framecl_allocate_options node{FRAMECL_BUFFERS_DRM, "/dev/dri/no-such-card"};
    CHECK(framecl_allocate_buffer(&node, 4096, nullptr) == -ENOENT);
    CHECK(contains(framecl_last_error(nullptr), "/dev/dri/no-such-card: No such file or directory"));

    const framecl_allocate_options bad{framecl_buffer_source(9), nullptr};
    CHECK(framecl_allocate_buffer(&bad, 4096, nullptr) == -EINVAL);
    CHECK(contains(framecl_last_error(nullptr), "unknown buffer source 9"));
    CHECK(framecl_allocate_buffer(nullptr, 0, nullptr) == -EINVAL);
}

TEST_CASE("CPU access on a memfd needs no sync and succeeds; bad flags are refused")
{
    const framecl_allocate_options options{FRAMECL_BUFFERS_MEMFD, nullptr};
    const UniqueFd fd(framecl_allocate_buffer(&options, 4096, nullptr));
    REQUIRE(fd.valid());
    CHECK(framecl_begin_cpu_access(fd.get(), FRAMECL_CPU_WRITE) == 0);
    CHECK(framecl_end_cpu_access(fd.get(), FRAMECL_CPU_WRITE) == 0);
    CHECK(framecl_begin_cpu_access(fd.get(), FRAMECL_CPU_READ | FRAMECL_CPU_WRITE) == 0);
    CHECK(framecl_end_cpu_access(fd.get(), FRAMECL_CPU_READ | FRAMECL_CPU_WRITE) == 0);
    CHECK(framecl_begin_cpu_access(fd.get(), 0) == -EINVAL);
    CHECK(framecl_begin_cpu_access(fd.get(), 4) == -EINVAL);
    CHECK(contains(framecl_last_error(nullptr), "CPU access flags 0x4"));
}

TEST_CASE("buffer sources have names")
{
    CHECK(std::string(framecl_buffer_source_name(FRAMECL_BUFFERS_AUTO)) == "auto");
    CHECK(std::string(framecl_buffer_source_name(FRAMECL_BUFFERS_DMA_HEAP)) == "dma-heap");
    CHECK(std::string(framecl_buffer_source_name(FRAMECL_BUFFERS_DRM)) == "drm");
    CHECK(std::string(framecl_buffer_source_name(FRAMECL_BUFFERS_MEMFD)) == "memfd");
    CHECK(framecl_buffer_source_name(framecl_buffer_source(7)) == nullptr);
}
