#include "shared_frame_buffer.hpp"

#include <utility>

#include <fmt/format.h>

namespace framecl::cli {

Result<SharedFrameBuffer> SharedFrameBuffer::create(framecl_client* client, const framecl_frame_layout& layout,
                                                    const std::string& name, framecl_allocate_options source)
{
    if (const char* problem = framecl_layout_problem(&layout))
        return fail(fmt::format("{}: {}", name, problem));
    const uint64_t size = framecl_layout_end(&layout);
    framecl_buffer_source used = FRAMECL_BUFFERS_AUTO;
    UniqueFd fd(framecl_allocate_buffer(&source, size, &used));
    if (!fd.valid())
        return fail(fmt::format("allocating {} ({} bytes, {}): {}", name, size,
                                framecl_buffer_source_name(source.source), framecl_last_error(nullptr)));
    auto mapping = BufferMapping::map(fd.get(), size);
    if (!mapping)
        return tl::unexpected(mapping.error());
    uint32_t id = 0;
    if (framecl_register_buffer(client, fd.get(), &layout, &id) != 0)
        return fail(fmt::format("registering {} with framecld: {}", name, framecl_last_error(client)));
    return SharedFrameBuffer(client, layout, used, std::move(fd), std::move(*mapping), id);
}

SharedFrameBuffer::SharedFrameBuffer(framecl_client* client, const framecl_frame_layout& layout,
                                     framecl_buffer_source source, UniqueFd fd, BufferMapping mapping, uint32_t id)
    : client_(client), layout_(layout), source_(source), fd_(std::move(fd)), mapping_(std::move(mapping)), id_(id)
{
}

SharedFrameBuffer::SharedFrameBuffer(SharedFrameBuffer&& other) noexcept
    : client_(std::exchange(other.client_, nullptr)), layout_(other.layout_), source_(other.source_),
      fd_(std::move(other.fd_)), mapping_(std::move(other.mapping_)), id_(other.id_)
{
}

SharedFrameBuffer::~SharedFrameBuffer()
{
    // A failed release is not worth reporting: the daemon frees whatever a client still
    // holds when it says Goodbye.
    if (client_)
        framecl_release_buffer(client_, id_);
}

Result<CpuAccess> CpuAccess::begin(int fd, unsigned flags)
{
    if (framecl_begin_cpu_access(fd, flags) != 0)
        return fail(fmt::format("CPU access to a frame buffer: {}", framecl_last_error(nullptr)));
    return CpuAccess(fd, flags);
}

CpuAccess::CpuAccess(CpuAccess&& other) noexcept : fd_(std::exchange(other.fd_, -1)), flags_(other.flags_) {}

CpuAccess::~CpuAccess()
{
    // Only a bad fd or bad flags fail here, and begin() took the same ones.
    if (fd_ >= 0)
        framecl_end_cpu_access(fd_, flags_);
}

} // namespace framecl::cli
