#include "buffer_allocation.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include <fmt/format.h>

namespace framecl::clientlib {
namespace {

constexpr const char* default_heap = "system";
// DRM nodes /dev/dri/card0 .. card63 are looked at for vgem when no device is named.
constexpr int drm_card_nodes = 64;
// Dumb buffers are asked for as rows of this many 8-bit pixels: the frame's layout is
// the client's business, the dumb buffer only has to be large enough.
constexpr uint32_t dumb_row_bytes = 4096;

std::string errnoText(int error)
{
    return std::strerror(error);
}

Outcome<UniqueFd> fromHeap(const char* name, uint64_t size)
{
    const std::string path = fmt::format("/dev/dma_heap/{}", name ? name : default_heap);
    UniqueFd heap(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!heap.valid())
        return failure(errno, fmt::format("{}: {}", path, errnoText(errno)));
    dma_heap_allocation_data allocation{};
    allocation.len = size;
    allocation.fd_flags = O_RDWR | O_CLOEXEC;
    if (ioctl(heap.get(), DMA_HEAP_IOCTL_ALLOC, &allocation) != 0)
        return failure(errno, fmt::format("{}: allocating {} bytes: {}", path, size, errnoText(errno)));
    return UniqueFd(int(allocation.fd));
}

// The DRM device's driver name ("vgem", "msm"), or "" where it has none to tell.
std::string driverName(int fd)
{
    drmVersionPtr version = drmGetVersion(fd);
    if (!version)
        return {};
    std::string name(version->name, size_t(version->name_len));
    drmFreeVersion(version);
    return name;
}

Outcome<UniqueFd> openDrmNode(const char* device)
{
    if (device) {
        UniqueFd node(open(device, O_RDWR | O_CLOEXEC));
        if (!node.valid())
            return failure(errno, fmt::format("{}: {}", device, errnoText(errno)));
        return node;
    }
    for (int card = 0; card < drm_card_nodes; ++card) {
        UniqueFd node(open(fmt::format("/dev/dri/card{}", card).c_str(), O_RDWR | O_CLOEXEC));
        if (node.valid() && driverName(node.get()) == "vgem")
            return node;
    }
    return failure(ENOENT, "no /dev/dri/card* node of the vgem driver (modprobe vgem), and no DRM device named");
}

// A dumb buffer (DRM_IOCTL_MODE_CREATE_DUMB) exported as a dma-buf (PRIME). The dma-buf
// keeps the object alive once the handle and the node are closed.
Outcome<UniqueFd> fromDrm(const char* device, uint64_t size)
{
    auto node = openDrmNode(device);
    if (!node)
        return tl::unexpected(node.error());
    const std::string name = device ? device : "the vgem node";
    const uint64_t rows = (size + dumb_row_bytes - 1) / dumb_row_bytes;
    if (rows > UINT32_MAX)
        return failure(EINVAL, fmt::format("{} bytes is too large for a dumb buffer", size));
    uint32_t handle = 0, pitch = 0;
    uint64_t created = 0;
    if (const int r = drmModeCreateDumbBuffer(node->get(), dumb_row_bytes, uint32_t(rows), 8, 0, &handle, &pitch,
                                              &created);
        r != 0)
        return failure(-r, fmt::format("{}: a dumb buffer of {} bytes: {}", name, size, errnoText(-r)));
    int exported = -1;
    const int r = drmPrimeHandleToFD(node->get(), handle, DRM_CLOEXEC | DRM_RDWR, &exported);
    const int error = errno;
    drmModeDestroyDumbBuffer(node->get(), handle);
    if (r != 0)
        return failure(error, fmt::format("{}: exporting a dumb buffer as a dma-buf: {}", name, errnoText(error)));
    return UniqueFd(exported);
}

// Sealed so that the daemon accepts it (docs/protocol.md, "Buffer checks"): no shrinking
// under the GPU, no growing, no further seals; not write-sealed, since outputs are
// written into it.
Outcome<UniqueFd> sealedMemfd(uint64_t size)
{
    UniqueFd fd(memfd_create("framecl-frame", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid())
        return failure(errno, fmt::format("memfd_create: {}", errnoText(errno)));
    if (ftruncate(fd.get(), off_t(size)) != 0)
        return failure(errno, fmt::format("a memfd of {} bytes: {}", size, errnoText(errno)));
    if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return failure(errno, fmt::format("sealing a memfd: {}", errnoText(errno)));
    return fd;
}

bool isDmaBuf(int fd)
{
    struct statfs fs {};
    return fstatfs(fd, &fs) == 0 && fs.f_type == DMA_BUF_MAGIC;
}

} // namespace

Outcome<AllocatedBuffer> allocateBuffer(framecl_buffer_source source, const char* device, uint64_t size)
{
    if (size == 0)
        return failure(EINVAL, "a buffer of 0 bytes");
    Outcome<UniqueFd> fd = failure(EINVAL, fmt::format("unknown buffer source {}", int(source)));
    switch (source) {
    case FRAMECL_BUFFERS_AUTO:
        // A heap that is absent, or closed to this user, leaves memfds; any other
        // failure of a heap that is there is the caller's to see.
        fd = fromHeap(device, size);
        if (fd)
            return AllocatedBuffer{std::move(*fd), FRAMECL_BUFFERS_DMA_HEAP};
        if (fd.error().error != ENOENT && fd.error().error != EACCES)
            return tl::unexpected(fd.error());
        source = FRAMECL_BUFFERS_MEMFD;
        fd = sealedMemfd(size);
        break;
    case FRAMECL_BUFFERS_DMA_HEAP:
        fd = fromHeap(device, size);
        break;
    case FRAMECL_BUFFERS_DRM:
        fd = fromDrm(device, size);
        break;
    case FRAMECL_BUFFERS_MEMFD:
        fd = sealedMemfd(size);
        break;
    }
    if (!fd)
        return tl::unexpected(fd.error());
    return AllocatedBuffer{std::move(*fd), source};
}

Outcome<void> syncCpuAccess(int fd, unsigned flags, bool start)
{
    if ((flags & ~unsigned(FRAMECL_CPU_READ | FRAMECL_CPU_WRITE)) != 0 || flags == 0)
        return failure(EINVAL, fmt::format("CPU access flags {:#x}: FRAMECL_CPU_READ, FRAMECL_CPU_WRITE or both", flags));
    if (!isDmaBuf(fd))
        return {};
    dma_buf_sync sync{uint64_t(start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) |
                      uint64_t((flags & FRAMECL_CPU_READ) ? DMA_BUF_SYNC_READ : 0) |
                      uint64_t((flags & FRAMECL_CPU_WRITE) ? DMA_BUF_SYNC_WRITE : 0)};
    // Documentation/driver-api/dma-buf.rst: restarted on EINTR and EAGAIN.
    int r = 0;
    do
        r = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
    while (r != 0 && (errno == EINTR || errno == EAGAIN));
    if (r != 0)
        return failure(errno, fmt::format("DMA_BUF_IOCTL_SYNC on fd {}: {}", fd, errnoText(errno)));
    return {};
}

} // namespace framecl::clientlib
