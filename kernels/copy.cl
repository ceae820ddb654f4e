// The built-in `copy` pipeline: each plane of a frame, unchanged. It exists to
// measure the transport (import, dispatch, completion) with no filter cost on top.
// One work item per 16 bytes of a row: (x, y) = (16 * id0, row), so that it measures
// the transport and not byte loads.
//
// When both planes' offsets and strides are multiples of 16 (the buffers themselves
// start at CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 16 bytes), each full 16-byte chunk is
// one aligned uint4 load and one aligned uint4 store: a GPU's widest per-thread access.
// Otherwise full chunks go through vload16 / vstore16, which a compiler may split into
// narrower accesses. A row's last chunk, when the row's bytes are no multiple of 16, is
// copied byte by byte so that nothing past the row is written.
// Reads 16 bytes and writes 16 bytes per work item (fewer at a row's end).

#if FRAMECL_KERNEL_WANTED(copy_plane)
__kernel void copy_plane(__global const uchar* restrict src, uint src_offset, uint src_stride,
                         __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                         uint row_bytes, uint rows)
{
    const uint x0 = 16 * get_global_id(0);
    const uint y = get_global_id(1);
    if (x0 >= row_bytes || y >= rows)
        return;
    __global const uchar* from = src + src_offset + y * src_stride + x0;
    __global uchar* to = dst + dst_offset + y * dst_stride + x0;
    if (x0 + 16 <= row_bytes) {
        if (((src_offset | src_stride | dst_offset | dst_stride) & 15u) == 0)
            *(__global uint4*)to = *(__global const uint4*)from;
        else
            vstore16(vload16(0, from), 0, to);
        return;
    }
    for (uint i = 0; i < row_bytes - x0; ++i)
        to[i] = from[i];
}
#endif

// copy_pointwise: the identity (include/framecl/plugin.h, "Pointwise stages"), block 1x1,
// for a copy stage the daemon fuses with its neighbours.
void copy_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
}

// The daemon's copies of a plane into the image a stage reads it from, where no stage
// wrote it as one (include/framecl/plugin.h, the *_IMAGE kinds): one work item per
// pixel, (src, src_offset, src_stride, dst, width, height). An 8-bit plane is CL_R (NV12's
// UV plane too, byte by byte), ABGR8888 CL_RGBA, R16 CL_R of 16 bits; all CL_UNSIGNED_INT*.

#if FRAMECL_KERNEL_WANTED(copy_plane_to_image_r8)
__kernel void copy_plane_to_image_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                                     __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    write_imageui(dst, (int2)(x, y), (uint4)(src[src_offset + y * src_stride + x], 0, 0, 1));
}
#endif

#if FRAMECL_KERNEL_WANTED(copy_plane_to_image_rgba8)
__kernel void copy_plane_to_image_rgba8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                                        __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    write_imageui(dst, (int2)(x, y), convert_uint4(vload4(0, src + src_offset + y * src_stride + 4 * x)));
}
#endif

#if FRAMECL_KERNEL_WANTED(copy_plane_to_image_r16)
__kernel void copy_plane_to_image_r16(__global const uchar* restrict src, uint src_offset, uint src_stride,
                                      __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    // R16 is little-endian; an offset or stride may be odd, so bytes are read one by one.
    __global const uchar* p = src + src_offset + y * src_stride + 2 * x;
    write_imageui(dst, (int2)(x, y), (uint4)(p[0] | (uint)p[1] << 8, 0, 0, 1));
}
#endif
