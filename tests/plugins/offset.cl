// Test plugin `offset`: out = clamp(in + amount, 0, 255) for each R8 pixel.
// Reads 1 byte and writes 1 byte per work item.

__kernel void offset_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                        __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                        int amount, uint width, uint height)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    dst[dst_offset + y * dst_stride + x] = convert_uchar_sat((int)src[src_offset + y * src_stride + x] + amount);
}
