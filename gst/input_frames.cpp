#include "input_frames.hpp"

#include <fmt/format.h>

#include "frame_pool.hpp"
#include "video_formats.hpp"

namespace framecl::gst {

Result<std::unique_ptr<InputFrames>> InputFrames::create(const GstVideoInfo& info, std::shared_ptr<DaemonLink> link,
                                                         MemoryRegistry& registry)
{
    GstBufferPool* copies = gst_framecl_frame_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(copies);
    GstCaps* caps = gst_video_info_to_caps(&info);
    // Frames are processed one at a time: a copy is back in the pool before the next.
    gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), 1, 0);
    gst_caps_unref(caps);
    if (!gst_buffer_pool_set_config(copies, config) || !gst_buffer_pool_set_active(copies, TRUE)) {
        gchar* error = gst_framecl_frame_pool_dup_last_error(copies);
        auto failure = fail(fmt::format("preparing the pool that input frames are copied into: {}", error));
        g_free(error);
        gst_object_unref(copies);
        return failure;
    }
    return std::unique_ptr<InputFrames>(new InputFrames(info, std::move(link), registry, copies));
}

InputFrames::InputFrames(const GstVideoInfo& info, std::shared_ptr<DaemonLink> link, MemoryRegistry& registry,
                         GstBufferPool* copies)
    : info_(info), link_(std::move(link)), registry_(registry), copies_(copies)
{
}

InputFrames::~InputFrames()
{
    gst_buffer_pool_set_active(copies_, FALSE);
    gst_object_unref(copies_);
}

Result<DaemonInput> InputFrames::frameOf(GstBuffer* input)
{
    GstMemory* memory = gst_buffer_peek_memory(input, 0);
    if (gst_buffer_n_memory(input) != 1 || !shareableWithDaemon(memory))
        return copyOf(input);
    // A layout framecl cannot describe (rows bottom to top) is copied into one it can.
    auto layout = layoutOf(input, info_);
    if (!layout)
        return copyOf(input);
    auto id = registry_.idFor(memory, *layout, link_);
    if (!id)
        return tl::unexpected(id.error());
    return DaemonInput{*id};
}

Result<DaemonInput> InputFrames::copyOf(GstBuffer* input)
{
    GstBuffer* copy = nullptr;
    if (gst_buffer_pool_acquire_buffer(copies_, &copy, nullptr) != GST_FLOW_OK) {
        gchar* error = gst_framecl_frame_pool_dup_last_error(copies_);
        auto failure = fail(fmt::format("no frame to copy the input into: {}", error));
        g_free(error);
        return failure;
    }
    DaemonInput frame{0, {copy, gst_buffer_unref}};
    GstVideoFrame from, to;
    if (!gst_video_frame_map(&from, &info_, input, GST_MAP_READ))
        return fail("could not map an input buffer for reading: its size or video meta does not match the caps");
    const bool mapped = gst_video_frame_map(&to, &info_, copy, GST_MAP_WRITE);
    const bool copied = mapped && gst_video_frame_copy(&to, &from);
    gst_video_frame_unmap(&from);
    if (mapped)
        gst_video_frame_unmap(&to);
    if (!copied)
        return fail("could not copy an input frame into a frame of the element's pool");
    auto layout = layoutOf(copy, info_);
    if (!layout)
        return tl::unexpected(layout.error());
    auto id = registry_.idFor(gst_buffer_peek_memory(copy, 0), *layout, link_);
    if (!id)
        return tl::unexpected(id.error());
    frame.id = *id;
    return frame;
}

} // namespace framecl::gst
