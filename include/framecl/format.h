/* framecl frame layouts: a DRM fourcc, a size, and an explicit offset and stride per
 * plane, as a dma-buf exporter (V4L2, a camera HAL, GBM) describes its buffers.
 * Public and stable; plain C so that camera code in C links it too. */
#ifndef FRAMECL_FORMAT_H
#define FRAMECL_FORMAT_H

#include <stdint.h>

#include <drm_fourcc.h> /* DRM_FORMAT_R8, DRM_FORMAT_NV12, DRM_FORMAT_ABGR8888 (libdrm) */

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
    uint32_t fourcc; /* DRM_FORMAT_R8, DRM_FORMAT_R16, DRM_FORMAT_NV12 or DRM_FORMAT_ABGR8888 */
    uint32_t width;
    uint32_t height;
    uint32_t num_planes;
    struct framecl_plane planes[FRAMECL_MAX_PLANES];
};

/* Planes of a supported format (1 or 2), or 0 for a format framecl does not know. */
uint32_t framecl_format_planes(uint32_t fourcc);

/* "R8", "R16", "NV12", "ABGR8888", or NULL for a format framecl does not know. */
const char* framecl_format_name(uint32_t fourcc);

/* The DRM fourcc named by "r8", "r16", "nv12" or "abgr8888" (any case), or 0. */
uint32_t framecl_format_from_name(const char* name);

/* Fills `layout` with tightly packed planes (stride = width x bytes per pixel, planes
 * one after another) and returns the bytes the frame needs, or 0 if the format is
 * unknown or the size is 0 or odd where the format subsamples (NV12). */
uint64_t framecl_packed_layout(uint32_t fourcc, uint32_t width, uint32_t height,
                               struct framecl_frame_layout* layout);

/* Checks a layout: a known format, the right plane count, a non-zero size (even for
 * NV12), strides that cover each row. Returns NULL if it is valid, else a static
 * text saying what is wrong. */
const char* framecl_layout_problem(const struct framecl_frame_layout* layout);

/* Bytes from the buffer's start to the end of the last plane's last row: the least
 * size a buffer holding this layout must have. The layout must be valid. */
uint64_t framecl_layout_end(const struct framecl_frame_layout* layout);

#ifdef __cplusplus
}
#endif

#endif /* FRAMECL_FORMAT_H */
