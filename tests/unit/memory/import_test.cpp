// Import of real buffers on PoCL: which path is taken, and that the cl_mem and the
// client's mapping are the same bytes (guide §7.4). Real dma-bufs need a kernel with an
// exporter: tests/vm/dmabuf_test.cpp imports them in a guest.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "memory/imported_buffer.hpp"
#include "memory_fds.hpp"
#include "nv12_vga.hpp"

using namespace framecl;
using namespace framecl::memory;
using framecl::test::no_pixel_limit, framecl::test::nv12_vga_bytes, framecl::test::nv12Vga;

namespace {

std::shared_ptr<ImportedBuffer> importOrFail(const gpu::GpuContext& gpu, UniqueFd fd)
{
    auto buffer = importBuffer(gpu, std::move(fd), nv12Vga(), no_pixel_limit);
    REQUIRE_MESSAGE(buffer.has_value(), (buffer ? "" : buffer.error().message));
    return *buffer;
}

// Bytes that differ from their neighbours and from zero-filled memory.
std::vector<unsigned char> pattern(size_t size, unsigned seed)
{
    std::vector<unsigned char> bytes(size);
    for (size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<unsigned char>((i * 7 + seed) % 251 + 1);
    return bytes;
}

// Lines of /proc/self/maps that map the file /proc names `name`.
int mappingsOf(const std::string& name)
{
    std::ifstream maps("/proc/self/maps");
    int count = 0;
    for (std::string line; std::getline(maps, line);)
        count += line.find(name) != std::string::npos;
    return count;
}

} // namespace

TEST_CASE("the import paths are named as the protocol reports them")
{
    CHECK(std::string(importPathName(ImportPath::QcomDmabuf)) == "qcom-dmabuf");
    CHECK(std::string(importPathName(ImportPath::KhrDmabuf)) == "khr-dmabuf");
    CHECK(std::string(importPathName(ImportPath::HostPtr)) == "host-ptr");
}

TEST_CASE("a sealed memfd imports on PoCL through host-ptr over the whole buffer")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    auto buffer = importOrFail(*gpu, test::sealedMemfd("host-ptr", nv12_vga_bytes + 4096));
    CHECK(buffer->path() == ImportPath::HostPtr);
    CHECK(buffer->size() == nv12_vga_bytes + 4096);

    cl_mem_flags flags = 0;
    size_t size = 0;
    void* host_ptr = nullptr;
    REQUIRE(clGetMemObjectInfo(buffer->mem(), CL_MEM_FLAGS, sizeof(flags), &flags, nullptr) ==
            CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(buffer->mem(), CL_MEM_SIZE, sizeof(size), &size, nullptr) ==
            CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(buffer->mem(), CL_MEM_HOST_PTR, sizeof(host_ptr), &host_ptr,
                               nullptr) == CL_SUCCESS);
    CHECK((flags & CL_MEM_USE_HOST_PTR) != 0);
    CHECK(size == nv12_vga_bytes + 4096);
    CHECK(host_ptr != nullptr);
}

TEST_CASE("bytes the client writes to a memfd are what OpenCL reads from the imported buffer")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    const UniqueFd client_fd = test::sealedMemfd("read-through", nv12_vga_bytes);
    const test::SharedMapping client(client_fd.get(), nv12_vga_bytes);
    auto buffer = importOrFail(*gpu, test::duplicate(client_fd));

    const auto frame = pattern(nv12_vga_bytes, 3);
    std::memcpy(client.bytes(), frame.data(), nv12_vga_bytes);
    std::vector<unsigned char> read(nv12_vga_bytes);
    REQUIRE(clEnqueueReadBuffer(gpu->queue()(), buffer->mem(), CL_TRUE, 0, nv12_vga_bytes,
                                read.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(read == frame);
}

TEST_CASE("bytes OpenCL writes to the imported buffer appear in the client's memfd")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    const UniqueFd client_fd = test::sealedMemfd("write-through", nv12_vga_bytes);
    const test::SharedMapping client(client_fd.get(), nv12_vga_bytes);
    auto buffer = importOrFail(*gpu, test::duplicate(client_fd));

    const auto frame = pattern(nv12_vga_bytes, 5);
    REQUIRE(clEnqueueWriteBuffer(gpu->queue()(), buffer->mem(), CL_TRUE, 0, nv12_vga_bytes,
                                 frame.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(gpu->queue()()) == CL_SUCCESS);
    CHECK(std::memcmp(client.bytes(), frame.data(), nv12_vga_bytes) == 0);
}

TEST_CASE("a memfd takes host-ptr even where the device claims the dma-buf import extensions")
{
    const auto candidates = gpu::enumerateDevices();
    const auto chosen = gpu::chooseDevice(candidates, test::pocl_device);
    REQUIRE(chosen.has_value());
    gpu::Capabilities caps = gpu::readCapabilities(candidates[*chosen].device);
    caps.qcom_dmabuf_host_ptr = true; // what an Adreno driver would claim
    caps.khr_external_memory_dma_buf = true;
    auto gpu =
        gpu::openGpu(candidates[*chosen], caps, gpu::VendorEntryPoints{}, config::GpuConfig{});
    REQUIRE(gpu.has_value());

    auto buffer = importOrFail(**gpu, test::sealedMemfd("claimed", nv12_vga_bytes));
    CHECK(buffer->path() == ImportPath::HostPtr);
}

TEST_CASE("releasing an imported buffer closes its fd and unmaps it")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    UniqueFd fd = test::sealedMemfd("framecl-release-test", nv12_vga_bytes);
    const int number = fd.get();
    auto buffer = importOrFail(*gpu, std::move(fd));
    REQUIRE(fcntl(number, F_GETFD) != -1);
    REQUIRE(mappingsOf("/memfd:framecl-release-test") == 1);

    buffer.reset();
    errno = 0;
    CHECK(fcntl(number, F_GETFD) == -1);
    CHECK(errno == EBADF);
    CHECK(mappingsOf("/memfd:framecl-release-test") == 0);
}

TEST_CASE("an fd that fails the checks is refused by importBuffer and closed")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    UniqueFd fd = test::namedMemfd("unsealed-import", nv12_vga_bytes, 0);
    const int number = fd.get();
    const auto buffer = importBuffer(*gpu, std::move(fd), nv12Vga(), no_pixel_limit);
    REQUIRE_FALSE(buffer.has_value());
    CHECK(buffer.error().message.find("F_SEAL_SHRINK") != std::string::npos);
    CHECK(fcntl(number, F_GETFD) == -1);
}
