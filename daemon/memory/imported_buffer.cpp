// Import of a client buffer (docs/architecture.md, "Memory"; guide §7.4): qcom-dmabuf,
// khr-dmabuf, then host-ptr or host-copy, each falling through to the next on a refusal.
#include "memory/imported_buffer.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <CL/cl_ext.h>
#include <fmt/format.h>

#include "base/log.hpp"
#include "gpu/cl_error.hpp"
#include "gpu/vendor_extensions.hpp"
#include "plane_rows.hpp"

namespace framecl::memory {
namespace {

// Guide §7.7: for memory allocated outside OpenCL "the application must correctly set
// the CPU cache policy flag". The policy states how the exporter mapped the pages for
// the CPU, not how we mean to use them: camera, V4L2 and GBM buffers on Linux come from
// cached heaps (the dma-heap "system" heap), and the client may have filled the frame
// through its cached mapping. Write-back makes the driver clean and invalidate the CPU
// caches around GPU use; uncached or write-combining would skip that and let the GPU
// read stale lines. Write-back is also the driver's own default (§7.7).
constexpr cl_uint dmabuf_cache_policy = CL_MEM_HOST_WRITEBACK_QCOM;

Result<void*> mapWhole(int fd, uint64_t size)
{
    void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED)
        return fail(fmt::format("mmap of {} bytes failed: {}", size, std::strerror(errno)));
    return mapping;
}

void unmapWhole(void*& mapping, uint64_t size)
{
    if (mapping)
        munmap(mapping, size);
    mapping = nullptr;
}

Result<size_t> deviceSize(const gpu::GpuContext& gpu, cl_device_info param, const char* name)
{
    size_t value = 0;
    const cl_int err = clGetDeviceInfo(gpu.device(), param, sizeof(value), &value, nullptr);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure(fmt::format("clGetDeviceInfo({})", name), err));
    return value;
}

// cl_qcom_dmabuf_host_ptr (guide §7.4.2.1, qcom-extensions.md). The device may touch
// CL_DEVICE_EXT_MEM_PADDING_IN_BYTES_QCOM bytes past the end of the buffer object, so
// the object stops that far short of the dma-buf's end; the host pointer must be
// aligned to the device's page.
Result<cl::Buffer> createQcomDmabuf(const gpu::GpuContext& gpu, int fd, void* mapping,
                                    uint64_t size, uint64_t layout_end)
{
    const auto padding = deviceSize(gpu, CL_DEVICE_EXT_MEM_PADDING_IN_BYTES_QCOM,
                                    "CL_DEVICE_EXT_MEM_PADDING_IN_BYTES_QCOM");
    if (!padding)
        return tl::unexpected(padding.error());
    const auto page = deviceSize(gpu, CL_DEVICE_PAGE_SIZE_QCOM, "CL_DEVICE_PAGE_SIZE_QCOM");
    if (!page)
        return tl::unexpected(page.error());
    if (*page != 0 && reinterpret_cast<uintptr_t>(mapping) % *page != 0)
        return fail(fmt::format("the mapping at {} is not aligned to the device page of {} bytes",
                                mapping, *page));
    if (size < layout_end + *padding)
        return fail(
            fmt::format("a {}-byte buffer leaves no room for the device's {} bytes of padding "
                        "after the {} the layout needs",
                        size, *padding, layout_end));

    cl_mem_dmabuf_host_ptr dmabuf{};
    dmabuf.ext_host_ptr.allocation_type = CL_MEM_DMABUF_HOST_PTR_QCOM;
    dmabuf.ext_host_ptr.host_cache_policy = dmabuf_cache_policy;
    dmabuf.dmabuf_filedesc = fd;
    dmabuf.dmabuf_hostptr = mapping;
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(gpu.context()(),
                                CL_MEM_USE_HOST_PTR | CL_MEM_EXT_HOST_PTR_QCOM | CL_MEM_READ_WRITE,
                                size - *padding, &dmabuf, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "CL_MEM_DMABUF_HOST_PTR_QCOM"));
    return cl::Buffer(mem);
}

// cl_khr_external_memory_dma_buf: the driver imports the fd itself; no mapping.
Result<cl::Buffer> createKhrDmabuf(const gpu::GpuContext& gpu, int fd, uint64_t size)
{
    const cl_mem_properties properties[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                            cl_mem_properties(fd), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = gpu.vendor().clCreateBufferWithProperties(gpu.context()(), properties, CL_MEM_READ_WRITE, size,
                                                           nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBufferWithProperties", err,
                                   "CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR"));
    return cl::Buffer(mem);
}

// Core OpenCL on our own mapping, for a device that works in host memory (PoCL,
// integrated GPUs): zero-copy. On a device with memory of its own a runtime may keep a
// device copy that is current only after a map or an explicit read or write (OpenCL
// 3.0, 5.2.3, "Mapping Buffer Objects"): host-copy makes those copies explicit.
Result<cl::Buffer> createHostPtr(const gpu::GpuContext& gpu, void* mapping, uint64_t size)
{
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(gpu.context()(), CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, size,
                                mapping, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "CL_MEM_USE_HOST_PTR"));
    return cl::Buffer(mem);
}

// A buffer in device memory, as large as the layout: each frame copies the layout's
// bytes in from the client's mapping and out to it (ImportedBuffer::enqueueUpload).
Result<cl::Buffer> createHostCopy(const gpu::GpuContext& gpu, uint64_t layout_end)
{
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(gpu.context()(), CL_MEM_READ_WRITE, layout_end, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "device buffer for host-copy"));
    return cl::Buffer(mem);
}

// The client's mapping as a CL_MEM_USE_HOST_PTR buffer that no command uses, beside a
// host-copy's device buffer: a runtime with memory of its own page-locks the memory
// such a buffer covers, and the copies from and to it then go by DMA instead of through
// the runtime's staging of pageable memory, which bounds every client's frames
// together (docs/benchmarks.md, "Many clients"). Empty where the runtime refuses: the
// copies still work, slower.
cl::Buffer pinMapping(const gpu::GpuContext& gpu, void* mapping, uint64_t size, const std::string& what)
{
    auto pinned = createHostPtr(gpu, mapping, size);
    if (pinned)
        return std::move(*pinned);
    log::get("memory")->debug("buffer import of {}: its memory stays pageable: {}", what, pinned.error().message);
    return {};
}

const char* copyNote(ImportPath path)
{
    switch (path) {
    case ImportPath::QcomDmabuf:
    case ImportPath::KhrDmabuf:
        return "zero-copy: the driver maps the dma-buf";
    case ImportPath::HostPtr:
        return "zero-copy: unified memory";
    case ImportPath::HostCopy:
        break;
    }
    return "device memory is not host memory: each frame's bytes are copied in and out, by DMA where the client's "
           "memory could be page-locked";
}

// Once per path per process: buffers come and go with every client, and info level
// is for events, never for every buffer or frame (docs/architecture.md, "Errors, logs and ownership").
void logWinner(ImportPath path)
{
    static std::array<std::atomic<bool>, 4> logged{};
    if (!logged[size_t(path)].exchange(true))
        log::get("memory")->info("buffer import: {} ({})", importPathName(path), copyNote(path));
}

// Documentation/driver-api/dma-buf.rst: CPU access through a dma-buf's mmap is
// bracketed by DMA_BUF_IOCTL_SYNC, restarted on EINTR and EAGAIN.
// Returns whether the kernel took it.
bool syncDmaBuf(int fd, uint64_t flags)
{
    dma_buf_sync sync{flags};
    int result = 0;
    do
        result = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
    while (result != 0 && (errno == EINTR || errno == EAGAIN));
    if (result != 0) // the frame goes on: a missed cache operation is not worth a failure
        log::get("memory")->debug("DMA_BUF_IOCTL_SYNC {:#x} on fd {} failed: {}", flags, fd,
                                  std::strerror(errno));
    return result == 0;
}

uint64_t syncDirection(ImportedBuffer::Access access)
{
    return access == ImportedBuffer::Access::Read ? DMA_BUF_SYNC_READ : DMA_BUF_SYNC_WRITE;
}

} // namespace

const char* fdKindName(FdKind kind)
{
    return kind == FdKind::DmaBuf ? "dma-buf" : "memfd";
}

const char* importPathName(ImportPath path)
{
    switch (path) {
    case ImportPath::QcomDmabuf:
        return "qcom-dmabuf";
    case ImportPath::KhrDmabuf:
        return "khr-dmabuf";
    case ImportPath::HostPtr:
        return "host-ptr";
    case ImportPath::HostCopy:
        break;
    }
    return "host-copy";
}

ImportedBuffer::~ImportedBuffer()
{
    // The cl_mem reads through the mapping and the fd: it goes first, then the mapping;
    // fd_, the first member, is destroyed last.
    mem_ = cl::Buffer();
    pinned_ = cl::Buffer();
    unmapWhole(mapping_, info_.size);
}

namespace {

// The bytes [offset, offset + size) that `layout`'s planes cover exactly, where they
// leave no gap: every row as long as its stride and each plane starting where the one
// before ends. None otherwise.
std::optional<std::pair<size_t, size_t>> gaplessSpan(const framecl_frame_layout& layout)
{
    const protocol::PlaneRows first = protocol::planeRows(layout, 0);
    uint64_t end = first.offset;
    for (uint32_t p = 0; p < layout.num_planes; ++p) {
        const protocol::PlaneRows plane = protocol::planeRows(layout, p);
        if (plane.offset != end || (plane.row_bytes != plane.stride && plane.rows > 1))
            return std::nullopt;
        end = plane.offset + plane.stride * (plane.rows - 1) + plane.row_bytes;
    }
    return std::pair{size_t(first.offset), size_t(end - first.offset)};
}

} // namespace

// Each plane's rows and nothing else, between the client's mapping and the device
// buffer at the same offsets: the padding after each row and between the planes is the
// client's (a frame may be a sub-rectangle of a larger canvas), and the device buffer's
// bytes there were never written. Planes that leave no gap go as one linear copy: the
// same bytes, in one call instead of a rectangle per plane, and each call costs the
// event loop on NVIDIA's runtime (docs/benchmarks.md, "Many clients"). The last
// copy's event: the queue is in order.
Result<std::optional<cl::Event>> ImportedBuffer::enqueuePlaneCopies(const cl::CommandQueue& queue,
                                                                    CopyDirection direction) const
{
    if (path_ != ImportPath::HostCopy)
        return std::nullopt;
    const bool to_device = direction == CopyDirection::ToDevice;
    const auto failure = [to_device](cl_int err, bool rect) {
        const char* call = to_device ? (rect ? "clEnqueueWriteBufferRect" : "clEnqueueWriteBuffer")
                                     : (rect ? "clEnqueueReadBufferRect" : "clEnqueueReadBuffer");
        return fail(gpu::clFailure(call, err,
                                   to_device ? "the input's copy to the device" : "the output's copy to the client"));
    };
    cl_event last = nullptr;
    if (const auto span = gaplessSpan(layout_)) {
        auto* host = static_cast<uint8_t*>(mapping_) + span->first;
        const cl_int err = to_device
                               ? clEnqueueWriteBuffer(queue(), mem_(), CL_FALSE, span->first, span->second, host,
                                                      0, nullptr, &last)
                               : clEnqueueReadBuffer(queue(), mem_(), CL_FALSE, span->first, span->second, host, 0,
                                                     nullptr, &last);
        if (err != CL_SUCCESS)
            return failure(err, false);
        return cl::Event(last); // takes the reference the enqueue returned
    }
    for (uint32_t p = 0; p < layout_.num_planes; ++p) {
        const protocol::PlaneRows plane = protocol::planeRows(layout_, p);
        const size_t origin[3] = {size_t(plane.offset), 0, 0};
        const size_t region[3] = {size_t(plane.row_bytes), size_t(plane.rows), 1};
        cl_event* event = p + 1 == layout_.num_planes ? &last : nullptr;
        const cl_int err =
            to_device
                ? clEnqueueWriteBufferRect(queue(), mem_(), CL_FALSE, origin, origin, region, plane.stride, 0,
                                           plane.stride, 0, mapping_, 0, nullptr, event)
                : clEnqueueReadBufferRect(queue(), mem_(), CL_FALSE, origin, origin, region, plane.stride, 0,
                                          plane.stride, 0, mapping_, 0, nullptr, event);
        if (err != CL_SUCCESS)
            return failure(err, true);
    }
    return cl::Event(last); // takes the reference the enqueue returned
}

Result<std::optional<cl::Event>> ImportedBuffer::enqueueUpload(const cl::CommandQueue& queue) const
{
    return enqueuePlaneCopies(queue, CopyDirection::ToDevice);
}

Result<std::optional<cl::Event>> ImportedBuffer::enqueueDownload(const cl::CommandQueue& queue) const
{
    return enqueuePlaneCopies(queue, CopyDirection::ToClient);
}

Result<std::optional<cl::Event>> ImportedBuffer::enqueueAcquire(const cl::CommandQueue& queue) const
{
    return enqueueHandOff(acquire_, "clEnqueueAcquireExternalMemObjectsKHR", queue);
}

Result<std::optional<cl::Event>> ImportedBuffer::enqueueRelease(const cl::CommandQueue& queue) const
{
    return enqueueHandOff(release_, "clEnqueueReleaseExternalMemObjectsKHR", queue);
}

Result<std::optional<cl::Event>> ImportedBuffer::enqueueHandOff(clEnqueueAcquireExternalMemObjectsKHR_fn enqueue,
                                                               const char* call, const cl::CommandQueue& queue) const
{
    if (!enqueue)
        return std::nullopt;
    const cl_mem mem = mem_();
    cl_event event = nullptr;
    const cl_int err = enqueue(queue(), 1, &mem, 0, nullptr, &event);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure(call, err, "a dma-buf imported by khr-dmabuf"));
    return cl::Event(event);
}

// With qcom-dmabuf and khr-dmabuf the driver owns the import and its cache operations
// (guide §7.7); with host-ptr and host-copy the runtime reaches a dma-buf through our
// CPU mapping, which the exporter must be told about.
void ImportedBuffer::beginAccess(Access access) const
{
    if (info_.kind == FdKind::DmaBuf && (path_ == ImportPath::HostPtr || path_ == ImportPath::HostCopy))
        cpu_syncs_ += syncDmaBuf(fd_.get(), DMA_BUF_SYNC_START | syncDirection(access));
}

void ImportedBuffer::endAccess(Access access) const
{
    if (info_.kind == FdKind::DmaBuf && (path_ == ImportPath::HostPtr || path_ == ImportPath::HostCopy))
        cpu_syncs_ += syncDmaBuf(fd_.get(), DMA_BUF_SYNC_END | syncDirection(access));
}

Result<std::shared_ptr<ImportedBuffer>> importBuffer(const gpu::GpuContext& gpu, UniqueFd fd,
                                                     const framecl_frame_layout& layout,
                                                     uint64_t max_frame_pixels)
{
    const auto info = validateBufferFd(fd.get(), layout, max_frame_pixels);
    if (!info)
        return tl::unexpected(info.error());

    // From here the buffer owns the fd and any mapping: every return releases them.
    std::shared_ptr<ImportedBuffer> buffer(new ImportedBuffer());
    buffer->fd_ = std::move(fd);
    buffer->info_ = *info;
    buffer->layout_ = layout;

    const gpu::Capabilities& caps = gpu.capabilities();
    const int raw_fd = buffer->fd_.get();
    const std::string what =
        fmt::format("fd {} ({}, {} bytes)", raw_fd, fdKindName(info->kind), info->size);
    auto logger = log::get("memory");
    std::vector<std::string> refusals; // of the paths tried, for the error if none takes it

    auto refused = [&](ImportPath path, const std::string& why) {
        logger->debug("buffer import of {}: {} failed: {}", what, importPathName(path), why);
        refusals.push_back(fmt::format("{}: {}", importPathName(path), why));
    };
    auto mapped = [&]() -> Result<void*> {
        if (buffer->mapping_)
            return buffer->mapping_;
        auto mapping = mapWhole(raw_fd, info->size);
        if (mapping)
            buffer->mapping_ = *mapping;
        return mapping;
    };
    auto chosen = [&](ImportPath path, cl::Buffer mem) {
        buffer->path_ = path;
        buffer->mem_ = std::move(mem);
        logger->debug("buffer import of {}: {}", what, importPathName(path));
        logWinner(path);
        return buffer;
    };

    if (info->kind == FdKind::DmaBuf) {
        // Guide §7.4.2.1. Some drivers take this path while they advertise only
        // cl_qcom_ion_host_ptr (qcom-extensions.md): try it on either.
        if (!caps.qcom_dmabuf_host_ptr && !caps.qcom_ion_host_ptr) {
            logger->debug("buffer import of {}: qcom-dmabuf skipped: the device offers neither "
                          "cl_qcom_dmabuf_host_ptr nor cl_qcom_ion_host_ptr",
                          what);
        } else if (const auto mapping = mapped(); !mapping) {
            refused(ImportPath::QcomDmabuf, mapping.error().message);
        } else if (auto mem = createQcomDmabuf(gpu, raw_fd, *mapping, info->size,
                                               framecl_layout_end(&layout))) {
            return chosen(ImportPath::QcomDmabuf, std::move(*mem));
        } else {
            refused(ImportPath::QcomDmabuf, mem.error().message);
        }

        const gpu::VendorEntryPoints& vendor = gpu.vendor();
        if (!caps.khr_external_memory_dma_buf) {
            logger->debug("buffer import of {}: khr-dmabuf skipped: the device does not offer "
                          "cl_khr_external_memory_dma_buf",
                          what);
        } else if (!vendor.clEnqueueAcquireExternalMemObjectsKHR || !vendor.clEnqueueReleaseExternalMemObjectsKHR) {
            refused(ImportPath::KhrDmabuf, "the platform exports no clEnqueueAcquireExternalMemObjectsKHR or "
                                           "clEnqueueReleaseExternalMemObjectsKHR");
        } else if (auto mem = createKhrDmabuf(gpu, raw_fd, info->size)) {
            unmapWhole(buffer->mapping_, info->size); // left by a refused qcom-dmabuf
            buffer->acquire_ = vendor.clEnqueueAcquireExternalMemObjectsKHR;
            buffer->release_ = vendor.clEnqueueReleaseExternalMemObjectsKHR;
            return chosen(ImportPath::KhrDmabuf, std::move(*mem));
        } else {
            refused(ImportPath::KhrDmabuf, mem.error().message);
        }
    } else {
        logger->debug(
            "buffer import of {}: qcom-dmabuf and khr-dmabuf skipped: they import dma-bufs only",
            what);
    }

    // Where the device has memory of its own, host-ptr would leave the frame's bytes
    // wherever the runtime last put them (the H100 returned every frame unchanged).
    const ImportPath host_path = caps.unified_memory ? ImportPath::HostPtr : ImportPath::HostCopy;
    if (const auto mapping = mapped(); !mapping) {
        refused(host_path, mapping.error().message);
    } else if (auto mem = host_path == ImportPath::HostPtr
                              ? createHostPtr(gpu, *mapping, info->size)
                              : createHostCopy(gpu, framecl_layout_end(&layout))) {
        if (host_path == ImportPath::HostCopy)
            buffer->pinned_ = pinMapping(gpu, *mapping, info->size, what);
        return chosen(host_path, std::move(*mem));
    } else {
        refused(host_path, mem.error().message);
    }
    return fail(fmt::format("{} could not be imported: {}", what, fmt::join(refusals, "; ")));
}

} // namespace framecl::memory
