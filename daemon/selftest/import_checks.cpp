// The self-test's checks of the ways a client's buffer reaches the device (guide §7.4,
// memory/imported_buffer.hpp): a sealed memfd, a dma-buf where this system has an
// exporter, and which of the device's dma-buf paths the import takes.
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include "selftest/checks.hpp"

namespace framecl::selftest {
namespace {

constexpr const char* import_area = "import";
// Where the dma-bufs come from: the heap a camera stack allocates from.
constexpr const char* dma_heap = "/dev/dma_heap/system";
// A frame that no row alignment divides.
constexpr pipeline::FrameShape copied_shape{DRM_FORMAT_ABGR8888, 93, 61};

// A dma-buf of `bytes` from the system heap holding `content`, written through a
// mapping bracketed for the CPU's write.
Result<UniqueFd> dmaBufWith(const PackedFrame& content, size_t bytes)
{
    const UniqueFd heap(open(dma_heap, O_RDONLY | O_CLOEXEC));
    if (!heap.valid())
        return fail(fmt::format("{}: {}", dma_heap, std::strerror(errno)));
    dma_heap_allocation_data allocation{};
    allocation.len = bytes;
    allocation.fd_flags = O_RDWR | O_CLOEXEC;
    if (ioctl(heap.get(), DMA_HEAP_IOCTL_ALLOC, &allocation) != 0)
        return fail(fmt::format("{}: allocating {} bytes: {}", dma_heap, bytes, std::strerror(errno)));
    UniqueFd fd(int(allocation.fd));
    if (content.empty())
        return fd;
    void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (mapping == MAP_FAILED)
        return fail(fmt::format("mapping a dma-buf of {} bytes: {}", bytes, std::strerror(errno)));
    dma_buf_sync sync{DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE};
    ioctl(fd.get(), DMA_BUF_IOCTL_SYNC, &sync);
    std::memcpy(mapping, content.data(), content.size());
    sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
    ioctl(fd.get(), DMA_BUF_IOCTL_SYNC, &sync);
    munmap(mapping, bytes);
    return fd;
}

// A frame copied between two buffers of `make`: the path the input took, or why not.
Result<memory::ImportPath> copyShared(const SelfTestDevice& device, const MakeBuffer& make)
{
    auto copy = findPipeline(device, "copy");
    if (!copy)
        return tl::unexpected(copy.error());
    auto session = pipeline::Session::open(device.gpu, *copy, copied_shape,
                                           sessionOptions(device, gpu::RecordingMode::Off));
    if (!session)
        return tl::unexpected(session.error());
    const PackedFrame content = randomFrame(copied_shape, 3);
    auto ran = runShared(device, **session, content, make);
    if (!ran)
        return tl::unexpected(ran.error());
    if (auto wrong = differences(ran->output, content); !wrong.empty())
        return fail("the frame came back wrong: " + wrong);
    return ran->input_path;
}

void report(std::vector<Check>& checks, const std::string& name, const Result<memory::ImportPath>& path)
{
    checks.push_back({import_area, name, path ? Outcome::Passed : Outcome::Failed,
                      path ? fmt::format("a frame copied through buffers imported by {}", memory::importPathName(*path))
                           : path.error().message});
}

// Whether the device's own dma-buf path `path`, offered as `extension`, took the
// dma-buf check's frame (the memory layer tries qcom-dmabuf, then khr-dmabuf).
void reportDevicePath(std::vector<Check>& checks, bool offered, const char* extension, memory::ImportPath path,
                      const std::optional<Result<memory::ImportPath>>& dma_buf)
{
    const std::string name = memory::importPathName(path);
    if (!offered)
        checks.push_back({import_area, name, Outcome::NotOffered, fmt::format("the device has no {}", extension)});
    else if (!dma_buf)
        checks.push_back({import_area, name, Outcome::NotOffered,
                          fmt::format("the device has {}, but this system has no dma-buf exporter to try it with", extension)});
    else if (*dma_buf && **dma_buf == path)
        checks.push_back({import_area, name, Outcome::Passed, "the dma-buf check's frame went through it"});
    else if (*dma_buf && path == memory::ImportPath::KhrDmabuf && **dma_buf == memory::ImportPath::QcomDmabuf)
        checks.push_back({import_area, name, Outcome::NotOffered,
                          "offered, but qcom-dmabuf is tried first and took the dma-buf check's frame"});
    else
        checks.push_back({import_area, name, Outcome::Failed,
                          fmt::format("the device has {}, but the dma-buf check's frame {}", extension,
                                      *dma_buf ? fmt::format("was imported by {} (framecld --log-level debug says why)",
                                                             memory::importPathName(**dma_buf))
                                               : std::string("failed"))});
}

} // namespace

void checkImports(const SelfTestDevice& device, std::vector<Check>& checks)
{
    report(checks, "memfd", copyShared(device, memfdWith));
    std::optional<Result<memory::ImportPath>> dma_buf;
    if (access(dma_heap, R_OK) == 0) {
        dma_buf = copyShared(device, dmaBufWith);
        report(checks, "dma-buf", *dma_buf);
    } else {
        checks.push_back({import_area, "dma-buf", Outcome::NotOffered,
                          fmt::format("no dma-buf exporter: {}: {}", dma_heap, std::strerror(errno))});
    }
    const gpu::Capabilities& caps = device.gpu.capabilities();
    reportDevicePath(checks, caps.qcom_dmabuf_host_ptr, "cl_qcom_dmabuf_host_ptr", memory::ImportPath::QcomDmabuf,
                     dma_buf);
    reportDevicePath(checks, caps.khr_external_memory_dma_buf, "cl_khr_external_memory_dma_buf",
                     memory::ImportPath::KhrDmabuf, dma_buf);
}

} // namespace framecl::selftest
