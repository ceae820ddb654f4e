#pragma once
// The pixel formats framecl and GStreamer share, and framecl frame layouts read from
// GStreamer's description of a buffer: the negotiated GstVideoInfo, or the buffer's
// GstVideoMeta where its producer laid it out its own way.

#include <cstdint>

#include <framecl/format.h>
#include <gst/video/video.h>

#include "base/result.hpp"

namespace framecl::gst {

// The GStreamer names of the formats framecl takes: NV12 (DRM NV12), RGBA (DRM
// ABGR8888, whose bytes are R, G, B, A), GRAY8 (R8) and GRAY16_LE (R16).
#define FRAMECL_GST_FORMATS "{ NV12, RGBA, GRAY8, GRAY16_LE }"

// The DRM fourcc of a GStreamer format; 0 for one framecl does not take.
uint32_t fourccOf(GstVideoFormat format);
// The GStreamer format of a DRM fourcc; GST_VIDEO_FORMAT_UNKNOWN for one without.
GstVideoFormat videoFormatOf(uint32_t fourcc);

// The layout of a frame of `info` whose planes begin `memory_offset` bytes into the
// buffer's fd (GstMemory's offset).
Result<framecl_frame_layout> layoutOf(const GstVideoInfo& info, gsize memory_offset = 0);

// The layout of `buffer`'s frame in its first memory's fd: its GstVideoMeta's offsets
// and strides where it has one, else `info`'s.
Result<framecl_frame_layout> layoutOf(GstBuffer* buffer, const GstVideoInfo& info);

// Fixed caps for frames of `output` that come from frames of `input` (a fixed caps
// structure): the framerate is the input's; colorimetry and chroma siting are kept
// where the format is, and the pixel aspect ratio where the size is.
GstCaps* capsFor(const framecl_frame_layout& output, const GstStructure* input);

} // namespace framecl::gst
