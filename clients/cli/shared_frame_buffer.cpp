#include "shared_frame_buffer.hpp"

#include <utility>

#include <fmt/format.h>

namespace framecl::cli {

Result<SharedFrameBuffer> SharedFrameBuffer::create(framecl_client* client, const framecl_frame_layout& layout,
                                                    const std::string& name)
{
    if (const char* problem = framecl_layout_problem(&layout))
        return fail(fmt::format("{}: {}", name, problem));
    const uint64_t size = framecl_layout_end(&layout);
    auto fd = createSealedMemfd(name, size);
    if (!fd)
        return tl::unexpected(fd.error());
    auto mapping = MemfdMapping::map(fd->get(), size);
    if (!mapping)
        return tl::unexpected(mapping.error());
    uint32_t id = 0;
    if (framecl_register_buffer(client, fd->get(), &layout, &id) != 0)
        return fail(fmt::format("registering {} with framecld: {}", name, framecl_last_error(client)));
    return SharedFrameBuffer(client, layout, std::move(*mapping), id);
}

SharedFrameBuffer::SharedFrameBuffer(framecl_client* client, const framecl_frame_layout& layout,
                                     MemfdMapping mapping, uint32_t id)
    : client_(client), layout_(layout), mapping_(std::move(mapping)), id_(id)
{
}

SharedFrameBuffer::SharedFrameBuffer(SharedFrameBuffer&& other) noexcept
    : client_(std::exchange(other.client_, nullptr)), layout_(other.layout_),
      mapping_(std::move(other.mapping_)), id_(other.id_)
{
}

SharedFrameBuffer::~SharedFrameBuffer()
{
    // A failed release is not worth reporting: the daemon frees whatever a client still
    // holds when it says Goodbye.
    if (client_)
        framecl_release_buffer(client_, id_);
}

} // namespace framecl::cli
