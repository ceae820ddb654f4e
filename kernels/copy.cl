// The built-in `copy` pipeline: each plane of a frame, unchanged. It exists to
// measure the transport (import, dispatch, completion) with no filter cost on top.
// One work item per byte of a row: (x, y) = (byte in the row, row).
// Reads 1 byte and writes 1 byte per work item.

__kernel void copy_plane(__global const uchar* restrict src, uint src_offset, uint src_stride,
                         __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                         uint row_bytes, uint rows)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= row_bytes || y >= rows)
        return;
    dst[dst_offset + y * dst_stride + x] = src[src_offset + y * src_stride + x];
}
