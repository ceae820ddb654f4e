#include "memory_registry.hpp"

#include <atomic>
#include <cstring>

#include <fcntl.h>
#include <gst/allocators/allocators.h>

namespace framecl::gst {
namespace {

struct Registration {
    std::shared_ptr<DaemonLink> link; // closed once the element stopped: then releasing does nothing
    uint32_t id;
    framecl_frame_layout layout;
};

void releaseRegistration(gpointer data)
{
    auto* registration = static_cast<Registration*>(data);
    registration->link->releaseBuffer(registration->id);
    delete registration;
}

} // namespace

bool shareableWithDaemon(GstMemory* memory)
{
    if (gst_is_dmabuf_memory(memory))
        return true;
    if (!gst_is_fd_memory(memory))
        return false;
    // Anything but a memfd answers EINVAL.
    const int seals = fcntl(gst_fd_memory_get_fd(memory), F_GET_SEALS);
    return seals >= 0 && (seals & F_SEAL_SHRINK) && !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE));
}

MemoryRegistry::MemoryRegistry()
{
    static std::atomic<unsigned> registries{0};
    quark_ = g_quark_from_string(("framecl-buffer-id-" + std::to_string(registries++)).c_str());
}

Result<uint32_t> MemoryRegistry::idFor(GstMemory* memory, const framecl_frame_layout& layout,
                                       const std::shared_ptr<DaemonLink>& link)
{
    GstMiniObject* object = GST_MINI_OBJECT_CAST(memory);
    const auto* known = static_cast<const Registration*>(gst_mini_object_get_qdata(object, quark_));
    if (known && known->link == link && std::memcmp(&known->layout, &layout, sizeof layout) == 0)
        return known->id;
    auto id = link->registerBuffer(gst_fd_memory_get_fd(memory), layout);
    if (!id)
        return tl::unexpected(id.error());
    // Replacing a registration of an earlier link or layout releases it.
    gst_mini_object_set_qdata(object, quark_, new Registration{link, *id, layout}, releaseRegistration);
    return *id;
}

} // namespace framecl::gst
