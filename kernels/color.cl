// Colour conversions.
//
// abgr_to_y: DRM_FORMAT_ABGR8888 (bytes R, G, B, A in memory) to an R8 plane holding
// BT.601 luma, Y = round(0.299 R + 0.587 G + 0.114 B), halves rounded up. Computed in
// integers with the weights scaled by 1000, which is exact: no float rounding can make
// the GPU and the CPU reference disagree.
// Reads 4 bytes and writes 1 byte per work item.

__kernel void abgr_to_y(__global const uchar* restrict src, uint src_offset, uint src_stride,
                        __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                        uint width, uint height)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const uint4 p = convert_uint4(vload4(0, src + src_offset + y * src_stride + 4 * x));
    dst[dst_offset + y * dst_stride + x] = (uchar)((299u * p.x + 587u * p.y + 114u * p.z + 500u) / 1000u);
}
