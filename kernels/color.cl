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

// nv12_to_y: the Y plane (plane 0) of an NV12 frame, unchanged, as an R8 plane.
// Reads 1 byte and writes 1 byte per work item.

__kernel void nv12_to_y(__global const uchar* restrict src, uint src_offset, uint src_stride,
                        __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                        uint width, uint height)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    dst[dst_offset + y * dst_stride + x] = src[src_offset + y * src_stride + x];
}

// nv12_to_abgr: NV12 (a Y plane, then a half-height plane of interleaved Cb, Cr bytes)
// to ABGR8888 with alpha 255. The plugin folds the matrix and range of
// docs/filters.md into one affine map per channel (see plan in plugins/color/color.cpp):
//   Y' = (Y - y_offset) * y_scale
//   R = Y' + r_cr * (Cr - 128), G = Y' - g_cb * (Cb - 128) - g_cr * (Cr - 128),
//   B = Y' + b_cb * (Cb - 128),
// each rounded to nearest and saturated to 0..255. Computed in float, so a channel may
// differ by 1 from the reference's double arithmetic.
// One work item per 2x2 block, which shares one Cb, Cr pair: the pair is read once and
// each row's two pixels are written with one 8-byte store (guide §10.2.2, vectorized
// load/store). Reads 6 bytes and writes 16 bytes per work item: 1.5 bytes read and
// 4 written per output pixel.

__kernel void nv12_to_abgr(__global const uchar* restrict luma, uint luma_offset, uint luma_stride,
                           __global const uchar* restrict chroma, uint chroma_offset, uint chroma_stride,
                           __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                           uint width, uint height, float y_offset, float y_scale,
                           float r_cr, float g_cb, float g_cr, float b_cb)
{
    const uint bx = get_global_id(0);
    const uint by = get_global_id(1);
    if (bx >= width / 2 || by >= height / 2)
        return;
    const float2 c = convert_float2(vload2(0, chroma + chroma_offset + by * chroma_stride + 2 * bx)) - 128.0f;
    const float r_chroma = r_cr * c.y;
    const float g_chroma = -g_cb * c.x - g_cr * c.y;
    const float b_chroma = b_cb * c.x;
    for (uint row = 0; row < 2; ++row) {
        const uint y = 2 * by + row;
        const float2 luma2 =
            (convert_float2(vload2(0, luma + luma_offset + y * luma_stride + 2 * bx)) - y_offset) * y_scale;
        // Rounded to nearest by adding 0.5 before the conversion, which truncates.
        const float8 rgba = (float8)(luma2.x + r_chroma, luma2.x + g_chroma, luma2.x + b_chroma, 255.0f,
                                     luma2.y + r_chroma, luma2.y + g_chroma, luma2.y + b_chroma, 255.0f) + 0.5f;
        vstore8(convert_uchar8_sat(rgba), 0, dst + dst_offset + y * dst_stride + 8 * bx);
    }
}
