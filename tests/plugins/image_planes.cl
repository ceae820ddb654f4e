// Test plugin `image_planes`: each plane read from an image (CL_UNSIGNED_INT8 or 16
// channels, include/framecl/plugin.h) and written back unchanged.

__kernel void image_to_buffer_r8(__read_only image2d_t src, __global uchar* dst, uint dst_offset, uint dst_stride,
                                 uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    dst[dst_offset + y * dst_stride + x] = (uchar)read_imageui(src, framecl_image_sampler, (int2)(x, y)).x;
}

__kernel void image_to_buffer_rgba8(__read_only image2d_t src, __global uchar* dst, uint dst_offset,
                                    uint dst_stride, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    vstore4(convert_uchar4(read_imageui(src, framecl_image_sampler, (int2)(x, y))), x,
            dst + dst_offset + y * dst_stride);
}

__kernel void image_to_buffer_r16(__read_only image2d_t src, __global uchar* dst, uint dst_offset, uint dst_stride,
                                  uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const uint v = read_imageui(src, framecl_image_sampler, (int2)(x, y)).x;
    __global uchar* p = dst + dst_offset + y * dst_stride + 2 * x;
    p[0] = (uchar)v;
    p[1] = (uchar)(v >> 8);
}

__kernel void image_to_image(__read_only image2d_t src, __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    write_imageui(dst, (int2)(x, y), read_imageui(src, framecl_image_sampler, (int2)(x, y)));
}
