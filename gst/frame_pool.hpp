#pragma once
// A GstBufferPool of video frames that framecld shares without a copy, allocated by
// framecl_allocate_buffer(FRAMECL_BUFFERS_AUTO): a dma-buf of the DMA-BUF heap
// "system" where this process may open it, wrapped as GstDmaBufMemory so that
// downstream sees dma-buf memory; a sealed memfd otherwise, as GstFdMemory. Frames are laid out as GstVideoInfo lays out the
// configured caps (with a GstVideoMeta saying so where the config asks for one); the
// element registers that same layout with the daemon.

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_FRAMECL_FRAME_POOL (gst_framecl_frame_pool_get_type())
G_DECLARE_FINAL_TYPE(GstFrameclFramePool, gst_framecl_frame_pool, GST, FRAMECL_FRAME_POOL, GstBufferPool)

GstBufferPool* gst_framecl_frame_pool_new(void);

// Why the pool's last allocation failed, for the element's error message (acquiring
// returns only GST_FLOW_ERROR); g_free() it.
gchar* gst_framecl_frame_pool_dup_last_error(GstBufferPool* pool);

G_END_DECLS
