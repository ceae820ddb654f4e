#pragma once
// A frame buffer shared with framecld: allocated by libframecl (a dma-buf from a heap or
// DRM node, or a sealed memfd), mapped here and registered there, released in exactly
// one place. Shared by the framecl CLI and framecl-mock-camera.

#include <cstdint>
#include <span>
#include <string>

#include <framecl/client.h>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "buffer_mapping.hpp"

namespace framecl::cli {

// The CPU's use of a buffer's bytes, from framecl_begin_cpu_access to the matching
// framecl_end_cpu_access when it goes (for a dma-buf, the DMA_BUF_IOCTL_SYNC pair).
class CpuAccess {
public:
    static Result<CpuAccess> begin(int fd, unsigned flags);
    CpuAccess(CpuAccess&& other) noexcept;
    CpuAccess& operator=(CpuAccess&&) = delete;
    CpuAccess(const CpuAccess&) = delete;
    CpuAccess& operator=(const CpuAccess&) = delete;
    ~CpuAccess();

private:
    CpuAccess(int fd, unsigned flags) : fd_(fd), flags_(flags) {}
    int fd_; // -1 once moved from
    unsigned flags_;
};

class SharedFrameBuffer {
public:
    // A buffer of framecl_layout_end(layout) bytes, zeroed, from `source`; `name` is for
    // messages. `client` must outlive it.
    static Result<SharedFrameBuffer> create(framecl_client* client, const framecl_frame_layout& layout,
                                            const std::string& name,
                                            framecl_allocate_options source = {FRAMECL_BUFFERS_MEMFD, nullptr});

    SharedFrameBuffer(SharedFrameBuffer&& other) noexcept;
    SharedFrameBuffer& operator=(SharedFrameBuffer&&) = delete;
    SharedFrameBuffer(const SharedFrameBuffer&) = delete;
    SharedFrameBuffer& operator=(const SharedFrameBuffer&) = delete;
    ~SharedFrameBuffer();

    uint32_t id() const { return id_; }
    const framecl_frame_layout& layout() const { return layout_; }
    // Where the buffer came from: never FRAMECL_BUFFERS_AUTO.
    framecl_buffer_source source() const { return source_; }
    // Read and write these only while a cpuAccess() with the matching flags is held.
    std::span<uint8_t> bytes() const { return mapping_.bytes(); }
    // FRAMECL_CPU_READ, FRAMECL_CPU_WRITE or both.
    Result<CpuAccess> cpuAccess(unsigned flags) const { return CpuAccess::begin(fd_.get(), flags); }

private:
    SharedFrameBuffer(framecl_client* client, const framecl_frame_layout& layout, framecl_buffer_source source,
                      UniqueFd fd, BufferMapping mapping, uint32_t id);

    framecl_client* client_; // nullptr once moved from
    framecl_frame_layout layout_;
    framecl_buffer_source source_;
    UniqueFd fd_; // for the CPU-access syncs; the library keeps a duplicate for the daemon
    BufferMapping mapping_;
    uint32_t id_;
};

} // namespace framecl::cli
