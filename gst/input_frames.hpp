#pragma once
// Where each input frame reaches framecld from: the input buffer itself where its one
// memory is an fd the daemon takes (a dma-buf, or a sealed memfd such as the frames of
// the pool the element proposes upstream), without a copy; else a copy into a frame of
// the element's own pool (frame_pool.hpp), with gst_video_frame_copy() bridging any
// difference of strides and plane offsets.

#include <memory>

#include <gst/video/video.h>

#include "daemon_link.hpp"
#include "memory_registry.hpp"

namespace framecl::gst {

// An input frame as the daemon names it, and the copy (if any) that must live until
// the frame is done.
struct DaemonInput {
    uint32_t id;
    std::unique_ptr<GstBuffer, void (*)(GstBuffer*)> copy{nullptr, gst_buffer_unref};
};

class InputFrames {
public:
    // Frames of `info`, the negotiated input caps.
    static Result<std::unique_ptr<InputFrames>> create(const GstVideoInfo& info, std::shared_ptr<DaemonLink> link,
                                                       MemoryRegistry& registry);
    ~InputFrames();
    InputFrames(const InputFrames&) = delete;
    InputFrames& operator=(const InputFrames&) = delete;

    Result<DaemonInput> frameOf(GstBuffer* input);

private:
    InputFrames(const GstVideoInfo& info, std::shared_ptr<DaemonLink> link, MemoryRegistry& registry,
                GstBufferPool* copies);

    Result<DaemonInput> copyOf(GstBuffer* input);

    GstVideoInfo info_;
    std::shared_ptr<DaemonLink> link_;
    MemoryRegistry& registry_;
    GstBufferPool* copies_; // active; frames of info_'s layout
};

} // namespace framecl::gst
