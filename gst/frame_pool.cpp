#include "frame_pool.hpp"

#include <framecl/client.h>
#include <gst/allocators/allocators.h>
#include <gst/video/video.h>

#include "debug_category.hpp"

struct _GstFrameclFramePool {
    GstBufferPool parent;
    GstAllocator* dmabuf_allocator; // for frames from the heap
    GstAllocator* fd_allocator;     // for memfds
    GstVideoInfo info;       // of the configured caps
    gboolean add_video_meta;
    gchar* last_error; // of alloc_buffer, which has no way to say it; under the object lock
};

G_DEFINE_TYPE(GstFrameclFramePool, gst_framecl_frame_pool, GST_TYPE_BUFFER_POOL)

namespace {

const gchar** framePoolOptions(GstBufferPool*)
{
    static const gchar* options[] = {GST_BUFFER_POOL_OPTION_VIDEO_META, nullptr};
    return options;
}

gboolean framePoolSetConfig(GstBufferPool* pool, GstStructure* config)
{
    GstFrameclFramePool* self = GST_FRAMECL_FRAME_POOL(pool);
    GstCaps* caps = nullptr;
    guint min_buffers = 0, max_buffers = 0;
    if (!gst_buffer_pool_config_get_params(config, &caps, nullptr, &min_buffers, &max_buffers) || !caps ||
        !gst_video_info_from_caps(&self->info, caps)) {
        GST_ERROR_OBJECT(pool, "a memfd pool needs fixed video caps, not %" GST_PTR_FORMAT, caps);
        return FALSE;
    }
    self->add_video_meta = gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    // The frame's size is GstVideoInfo's, whatever size the config asked for.
    gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&self->info), min_buffers, max_buffers);
    return GST_BUFFER_POOL_CLASS(gst_framecl_frame_pool_parent_class)->set_config(pool, config);
}

GstFlowReturn framePoolAllocBuffer(GstBufferPool* pool, GstBuffer** buffer, GstBufferPoolAcquireParams*)
{
    GstFrameclFramePool* self = GST_FRAMECL_FRAME_POOL(pool);
    const gsize size = GST_VIDEO_INFO_SIZE(&self->info);
    framecl_buffer_source used = FRAMECL_BUFFERS_AUTO;
    const int fd = framecl_allocate_buffer(nullptr, size, &used);
    if (fd < 0) {
        gchar* error = g_strdup_printf("allocating a %zu-byte buffer for a frame: %s", size,
                                       framecl_last_error(nullptr));
        GST_ERROR_OBJECT(pool, "%s", error);
        GST_OBJECT_LOCK(pool);
        g_free(self->last_error);
        self->last_error = error;
        GST_OBJECT_UNLOCK(pool);
        return GST_FLOW_ERROR;
    }
    // The memory owns the fd from here and closes it when freed. Mapping a dma-buf
    // memory brackets the CPU's access with DMA_BUF_IOCTL_SYNC.
    GstMemory* memory = used == FRAMECL_BUFFERS_MEMFD
                            ? gst_fd_allocator_alloc(self->fd_allocator, fd, size, GST_FD_MEMORY_FLAG_NONE)
                            : gst_dmabuf_allocator_alloc(self->dmabuf_allocator, fd, size);
    *buffer = gst_buffer_new();
    gst_buffer_append_memory(*buffer, memory);
    if (self->add_video_meta)
        gst_buffer_add_video_meta_full(*buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&self->info),
                                       GST_VIDEO_INFO_WIDTH(&self->info), GST_VIDEO_INFO_HEIGHT(&self->info),
                                       GST_VIDEO_INFO_N_PLANES(&self->info), self->info.offset, self->info.stride);
    return GST_FLOW_OK;
}

void framePoolFinalize(GObject* object)
{
    GstFrameclFramePool* self = GST_FRAMECL_FRAME_POOL(object);
    gst_object_unref(self->dmabuf_allocator);
    gst_object_unref(self->fd_allocator);
    g_free(self->last_error);
    G_OBJECT_CLASS(gst_framecl_frame_pool_parent_class)->finalize(object);
}

} // namespace

static void gst_framecl_frame_pool_class_init(GstFrameclFramePoolClass* klass)
{
    G_OBJECT_CLASS(klass)->finalize = framePoolFinalize;
    GstBufferPoolClass* pool_class = GST_BUFFER_POOL_CLASS(klass);
    pool_class->get_options = framePoolOptions;
    pool_class->set_config = framePoolSetConfig;
    pool_class->alloc_buffer = framePoolAllocBuffer;
}

static void gst_framecl_frame_pool_init(GstFrameclFramePool* self)
{
    self->dmabuf_allocator = gst_dmabuf_allocator_new();
    self->fd_allocator = gst_fd_allocator_new();
    gst_video_info_init(&self->info);
}

GstBufferPool* gst_framecl_frame_pool_new(void)
{
    return GST_BUFFER_POOL(g_object_new(GST_TYPE_FRAMECL_FRAME_POOL, nullptr));
}

gchar* gst_framecl_frame_pool_dup_last_error(GstBufferPool* pool)
{
    GST_OBJECT_LOCK(pool);
    const gchar* error = GST_FRAMECL_FRAME_POOL(pool)->last_error;
    gchar* copy = g_strdup(error ? error : "no memfd allocation failed");
    GST_OBJECT_UNLOCK(pool);
    return copy;
}
