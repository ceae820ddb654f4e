#pragma once
// A client's buffer made usable by the GPU without copying it (guide §7.4).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "framecl/format.h"
#include "gpu/context.hpp"

namespace framecl::memory {

enum class ImportPath {
    QcomDmabuf, // cl_qcom_dmabuf_host_ptr: the driver maps the dma-buf itself
    KhrDmabuf,  // cl_khr_external_memory_dma_buf
    HostPtr,    // mmap + CL_MEM_USE_HOST_PTR, where host memory is device memory: zero-copy
    HostCopy,   // a device buffer, copied from and to the mmap around each frame
};

// "qcom-dmabuf", "khr-dmabuf", "host-ptr", "host-copy": as logged and reported in stats.
const char* importPathName(ImportPath path);

enum class FdKind { DmaBuf, Memfd };

// "dma-buf", "memfd": as logged and reported in stats.
const char* fdKindName(FdKind kind);

// What validateBufferFd learnt about an fd.
struct BufferFdInfo {
    FdKind kind;
    uint64_t size; // bytes
};

// The checks of docs/protocol.md ("Buffer checks"), in this order: the layout is
// valid and within `max_frame_pixels`; the fd is a dma-buf or a memfd; a memfd has
// F_SEAL_SHRINK and no write seal (the import maps it writable); the buffer covers
// framecl_layout_end(). The error names the check.
Result<BufferFdInfo> validateBufferFd(int fd, const framecl_frame_layout& layout, uint64_t max_frame_pixels);

// One imported buffer: owns the fd, the mapping (when the path needs one) and the
// cl_mem, and releases them in that reverse order. Held by shared_ptr: a client's
// registry and each frame in flight that uses it (docs/architecture.md, "Errors, logs and ownership").
class ImportedBuffer {
public:
    ~ImportedBuffer();
    ImportedBuffer(const ImportedBuffer&) = delete;
    ImportedBuffer& operator=(const ImportedBuffer&) = delete;

    // Covers at least framecl_layout_end(layout()) bytes from the buffer's start.
    cl_mem mem() const { return mem_(); }
    const framecl_frame_layout& layout() const { return layout_; }
    ImportPath path() const { return path_; }
    FdKind kind() const { return info_.kind; }
    uint64_t size() const { return info_.size; }
    // The client's fd, for the dma-buf's fences (memory/sync_file.hpp).
    int fd() const { return fd_.get(); }
    // DMA_BUF_IOCTL_SYNC calls the kernel took for this buffer (START and END each
    // count): two per use of a dma-buf the runtime reaches through our mapping.
    uint64_t cpuSyncs() const { return cpu_syncs_; }

    // With host-copy, enqueue the copy of each plane's rows from the client's mapping
    // into the device buffer (before a frame reads it), or from the device buffer into
    // the mapping (after a frame wrote it), and return the last one's event; the bytes
    // between the rows are never copied. With every other path
    // the device works in the client's memory and nothing is enqueued (no event).
    // Both are non-blocking: the mapping must stay untouched until the event completes.
    Result<std::optional<cl::Event>> enqueueUpload(const cl::CommandQueue& queue) const;
    Result<std::optional<cl::Event>> enqueueDownload(const cl::CommandQueue& queue) const;

    // With khr-dmabuf, enqueue clEnqueueAcquireExternalMemObjectsKHR (before the first
    // command of a frame that uses the buffer) or clEnqueueReleaseExternalMemObjectsKHR
    // (after its last) and return its event: cl_khr_external_memory leaves a use without
    // them undefined. Nothing is enqueued for the other paths.
    Result<std::optional<cl::Event>> enqueueAcquire(const cl::CommandQueue& queue) const;
    Result<std::optional<cl::Event>> enqueueRelease(const cl::CommandQueue& queue) const;

    // Brackets one frame's use of the buffer by the OpenCL runtime. For a dma-buf
    // imported through host-ptr, DMA_BUF_IOCTL_SYNC START/END (read for inputs, write
    // for outputs), since the runtime then touches it through the CPU mapping; the
    // same for host-copy, whose copies read and write the mapping; a no-op otherwise.
    enum class Access { Read, Write };
    void beginAccess(Access access) const;
    void endAccess(Access access) const;

private:
    friend Result<std::shared_ptr<ImportedBuffer>> importBuffer(const gpu::GpuContext&, UniqueFd,
                                                                const framecl_frame_layout&, uint64_t);
    ImportedBuffer() = default;
    enum class CopyDirection { ToDevice, ToClient };
    Result<std::optional<cl::Event>> enqueuePlaneCopies(const cl::CommandQueue& queue, CopyDirection direction) const;
    // An acquire or a release (the two entry points share their signature).
    Result<std::optional<cl::Event>> enqueueHandOff(clEnqueueAcquireExternalMemObjectsKHR_fn enqueue, const char* call,
                                                    const cl::CommandQueue& queue) const;

    UniqueFd fd_;
    BufferFdInfo info_{};
    framecl_frame_layout layout_{};
    ImportPath path_ = ImportPath::HostPtr;
    void* mapping_ = nullptr; // mmap of the whole buffer, or nullptr
    cl::Buffer mem_;
    // host-copy: the mapping as a buffer no command uses, so that the runtime
    // page-locks it for the copies (pinMapping in imported_buffer.cpp); may be empty.
    cl::Buffer pinned_;
    // The device's entry points, for khr-dmabuf; nullptr otherwise.
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire_ = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn release_ = nullptr;
    mutable uint64_t cpu_syncs_ = 0; // counted by the const begin/endAccess, on the loop's thread
};

// Validates and imports a buffer, trying the paths in order — qcom-dmabuf, khr-dmabuf
// (both for dma-bufs, where the device offers them), then host-ptr on a device with
// unified memory or host-copy on one without — and falling back on
// any error; logs (debug) why a path was passed over and (info, once per path) which
// one won.
Result<std::shared_ptr<ImportedBuffer>> importBuffer(const gpu::GpuContext& gpu, UniqueFd fd,
                                                     const framecl_frame_layout& layout, uint64_t max_frame_pixels);

} // namespace framecl::memory
