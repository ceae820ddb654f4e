/* framecl frame layouts: a fourcc, a size, and an explicit offset and stride per
 * plane, as a dma-buf exporter (V4L2, a camera HAL, GBM) describes its buffers.
 * Public and stable; plain C so that camera code in C links it too. */
#ifndef FRAMECL_FORMAT_H
#define FRAMECL_FORMAT_H

#include <stdint.h>

#include <drm_fourcc.h> /* DRM_FORMAT_R8, DRM_FORMAT_NV12, DRM_FORMAT_ABGR8888 (libdrm) */

/* A camera sensor's raw Bayer formats have no DRM fourcc: framecl takes V4L2's
 * (V4L2_PIX_FMT_SRGGB8 ... V4L2_PIX_FMT_SGBRG12P of <linux/videodev2.h>), one plane of
 * 8 bits a sample, 10 or 12 in 16-bit words, or MIPI CSI-2 packed RAW10 (4 samples in 5
 * bytes) and RAW12 (2 in 3), in the four orders; docs/filters.md, "Bayer formats". */

#ifdef __cplusplus
extern "C" {
#endif

#define FRAMECL_MAX_PLANES 3

/* DRM_FORMAT_R16 is a 16-bit single-channel plane; framecl uses it for signed
 * gradients (two's complement), e.g. the Sobel filter's gx and gy. */

struct framecl_plane {
    uint32_t offset; /* bytes from the start of the buffer to the plane's first row */
    uint32_t stride; /* bytes from one row to the next; at least the row's width */
};

struct framecl_frame_layout {
    uint32_t fourcc; /* DRM_FORMAT_R8, _R16, _NV12, _ABGR8888, _ABGR16161616, or a Bayer format */
    uint32_t width;
    uint32_t height;
    uint32_t num_planes;
    struct framecl_plane planes[FRAMECL_MAX_PLANES];
};

/* Planes of a supported format (1 or 2), or 0 for a format framecl does not know. */
uint32_t framecl_format_planes(uint32_t fourcc);

/* "R8", "R16", "NV12", "ABGR8888", "ABGR16161616", a Bayer format's V4L2 name without
 * its prefix ("SRGGB10P"), or NULL for a format framecl does not know. */
const char* framecl_format_name(uint32_t fourcc);

/* The fourcc named by one of framecl_format_name()'s names (any case), or 0. */
uint32_t framecl_format_from_name(const char* name);

/* Fills `layout` with tightly packed planes (stride = the bytes of a row's pixels, planes
 * one after another) and returns the bytes the frame needs, or 0 if the format is
 * unknown or the size is 0 or one the format does not allow (an odd side for NV12 and
 * Bayer, a width that is not a multiple of 4 for packed RAW10). */
uint64_t framecl_packed_layout(uint32_t fourcc, uint32_t width, uint32_t height,
                               struct framecl_frame_layout* layout);

/* Checks a layout: a known format, the right plane count, a non-zero size the format
 * allows, strides that cover each row. Returns NULL if it is valid, else a static text
 * saying what is wrong. */
const char* framecl_layout_problem(const struct framecl_frame_layout* layout);

/* Bytes from the buffer's start to the end of the last plane's last row: the least
 * size a buffer holding this layout must have. The layout must be valid. */
uint64_t framecl_layout_end(const struct framecl_frame_layout* layout);

#ifdef __cplusplus
}
#endif

#endif /* FRAMECL_FORMAT_H */
