#pragma once
// A producer's fence on a vgem dma-buf, as a camera or GPU driver attaches one while it
// writes (tests/vm/README.md): DRM_IOCTL_VGEM_FENCE_ATTACH adds an unsignalled fence to
// the buffer's reservation, DRM_IOCTL_VGEM_FENCE_SIGNAL signals it, and vgem signals it
// with an error (ETIMEDOUT) by itself 10 s after it was attached.

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include <doctest/doctest.h>

#include "base/unique_fd.hpp"

namespace framecl::test {

// include/uapi/drm/vgem_drm.h, which Debian ships in no package.
struct VgemFenceAttach {
    uint32_t handle;
    uint32_t flags; // 1: VGEM_FENCE_WRITE
    uint32_t out_fence;
    uint32_t pad;
};
struct VgemFenceSignal {
    uint32_t fence;
    uint32_t flags;
};
inline constexpr unsigned long vgem_fence_attach = DRM_IOWR(DRM_COMMAND_BASE + 0x1, VgemFenceAttach);
inline constexpr unsigned long vgem_fence_signal = DRM_IOW(DRM_COMMAND_BASE + 0x2, VgemFenceSignal);

// One write fence on `dmabuf` (a vgem buffer), attached at construction.
class VgemWriteFence {
public:
    explicit VgemWriteFence(int dmabuf)
    {
        vgem_.reset(open("/dev/dri/card0", O_RDWR | O_CLOEXEC));
        REQUIRE_MESSAGE(vgem_.valid(), "/dev/dri/card0: " << std::strerror(errno));
        uint32_t handle = 0;
        REQUIRE_MESSAGE(drmPrimeFDToHandle(vgem_.get(), dmabuf, &handle) == 0, std::strerror(errno));
        VgemFenceAttach attach{handle, 1, 0, 0};
        REQUIRE_MESSAGE(ioctl(vgem_.get(), vgem_fence_attach, &attach) == 0,
                        "DRM_IOCTL_VGEM_FENCE_ATTACH: " << std::strerror(errno));
        fence_ = attach.out_fence;
    }

    void signal()
    {
        VgemFenceSignal request{fence_, 0};
        REQUIRE_MESSAGE(ioctl(vgem_.get(), vgem_fence_signal, &request) == 0,
                        "DRM_IOCTL_VGEM_FENCE_SIGNAL: " << std::strerror(errno));
    }

private:
    UniqueFd vgem_; // the fence lives as long as this file
    uint32_t fence_ = 0;
};

// The fences a reader of `dmabuf` must wait for, as one sync_file: what a producer
// hands over as an explicit acquire fence.
inline UniqueFd writersFence(int dmabuf)
{
    dma_buf_export_sync_file request{DMA_BUF_SYNC_READ, -1};
    REQUIRE_MESSAGE(ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &request) == 0,
                    "DMA_BUF_IOCTL_EXPORT_SYNC_FILE: " << std::strerror(errno));
    return UniqueFd(request.fd);
}

} // namespace framecl::test
