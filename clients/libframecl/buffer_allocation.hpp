#pragma once
// Frame buffers for camera processes that have no allocator of their own
// (framecl_allocate_buffer in include/framecl/client.h): a dma-buf from a DMA-BUF heap
// or a DRM device's dumb buffer, or a sealed memfd; and the CPU-access brackets a
// dma-buf's mapping needs.

#include <cstdint>

#include <framecl/client.h>

#include "base/unique_fd.hpp"
#include "failure.hpp"

namespace framecl::clientlib {

struct AllocatedBuffer {
    UniqueFd fd;
    framecl_buffer_source source; // never FRAMECL_BUFFERS_AUTO
};

// At least `size` bytes from `source`; `device` names the heap or DRM node (nullptr:
// the default the header states).
Outcome<AllocatedBuffer> allocateBuffer(framecl_buffer_source source, const char* device, uint64_t size);

// DMA_BUF_IOCTL_SYNC START or END for `flags` (FRAMECL_CPU_READ, FRAMECL_CPU_WRITE) on a
// dma-buf; nothing on any other fd.
Outcome<void> syncCpuAccess(int fd, unsigned flags, bool start);

} // namespace framecl::clientlib
