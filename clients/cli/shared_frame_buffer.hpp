#pragma once
// A frame buffer shared with framecld: a sealed memfd, mapped here and registered
// there, released in exactly one place. Shared by the framecl CLI and
// framecl-mock-camera.

#include <cstdint>
#include <span>
#include <string>

#include <framecl/client.h>

#include "base/result.hpp"
#include "sealed_memfd.hpp"

namespace framecl::cli {

class SharedFrameBuffer {
public:
    // A buffer of framecl_layout_end(layout) bytes, zeroed. `client` must outlive it.
    static Result<SharedFrameBuffer> create(framecl_client* client, const framecl_frame_layout& layout,
                                            const std::string& name);

    SharedFrameBuffer(SharedFrameBuffer&& other) noexcept;
    SharedFrameBuffer& operator=(SharedFrameBuffer&&) = delete;
    SharedFrameBuffer(const SharedFrameBuffer&) = delete;
    SharedFrameBuffer& operator=(const SharedFrameBuffer&) = delete;
    ~SharedFrameBuffer();

    uint32_t id() const { return id_; }
    const framecl_frame_layout& layout() const { return layout_; }
    std::span<uint8_t> bytes() const { return mapping_.bytes(); }

private:
    SharedFrameBuffer(framecl_client* client, const framecl_frame_layout& layout, MemfdMapping mapping, uint32_t id);

    framecl_client* client_; // nullptr once moved from
    framecl_frame_layout layout_;
    // The memfd itself lives on in the mapping and in the library's duplicate.
    MemfdMapping mapping_;
    uint32_t id_;
};

} // namespace framecl::cli
