#pragma once
// The ids framecld gave the memories the element shared with it, kept on each
// GstMemory (qdata) so that a memory seen again (a pool's frames come back every few
// frames) is registered once, and released when the memory is freed.

#include <cstdint>
#include <memory>

#include <gst/gst.h>

#include "daemon_link.hpp"

namespace framecl::gst {

// Whether framecld can take `memory`'s fd as it is (docs/protocol.md, RegisterBuffers):
// a dma-buf, or a memfd sealed against shrinking and not against writing, as the
// element's own pools make.
bool shareableWithDaemon(GstMemory* memory);

class MemoryRegistry {
public:
    // Each registry keys its own qdata: two framecl elements that see the same memory
    // (after a tee) keep an id each, on their own connections.
    MemoryRegistry();

    // The id of `memory` (shareableWithDaemon()) holding frames of `layout` on `link`,
    // registered now if it was not yet on this link with this layout.
    Result<uint32_t> idFor(GstMemory* memory, const framecl_frame_layout& layout,
                           const std::shared_ptr<DaemonLink>& link);

private:
    GQuark quark_;
};

} // namespace framecl::gst
