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
// differ by 1 from the reference's double arithmetic. Every variant below computes each
// pixel with the same three helpers, the same operations in the same order, so the
// variants give the same bytes.
//
//   nv12_to_abgr           (block2x2) one work item per 2x2 block, which shares one Cb,
//                          Cr pair: the pair is read once and each row's two pixels are
//                          written with one 8-byte store (guide §10.2.2). Reads 6 bytes
//                          and writes 16 per work item.
//   nv12_to_abgr_block<N>  (block<N>x2, N = 8 or 16) one work item per N x 2 pixels
//                          (N/2 blocks side by side): where every plane's offset and
//                          stride are multiples of 16, it loads each Y row's N bytes and
//                          the N bytes of Cb, Cr pairs with one or two aligned 8- or
//                          16-byte loads and writes each output row's 4N bytes with
//                          aligned 16-byte stores, a quarter to an eighth of block2x2's
//                          memory instructions per pixel. A work item at the right edge
//                          (fewer than N/2 blocks left), or any work item where the
//                          offsets or strides are not multiples of 16 (a branch that is
//                          uniform over the dispatch), converts its blocks one by one as
//                          block2x2 does.

// The affine map's chroma terms of one Cb, Cr pair.
static inline float3 chroma_terms(uchar2 cbcr, float r_cr, float g_cb, float g_cr, float b_cb)
{
    const float2 c = convert_float2(cbcr) - 128.0f;
    return (float3)(r_cr * c.y, -g_cb * c.x - g_cr * c.y, b_cb * c.x);
}

// Y' of one Y code.
static inline float luma_term(uchar y, float y_offset, float y_scale)
{
    return ((float)y - y_offset) * y_scale;
}

// One ABGR8888 pixel (bytes R, G, B, A), rounded to nearest by adding 0.5 before the
// conversion, which truncates, and saturated.
static inline uchar4 abgr_pixel(float luma, float3 chroma)
{
    return convert_uchar4_sat((float4)(luma + chroma.x, luma + chroma.y, luma + chroma.z, 255.0f) + 0.5f);
}

// The 2x2 block (bx, by): chroma pair bx of chroma row by, pixels 2 bx and 2 bx + 1 of
// rows 2 by and 2 by + 1.
static inline void nv12_block2x2(__global const uchar* restrict luma, uint luma_offset, uint luma_stride,
                                 __global const uchar* restrict chroma, uint chroma_offset, uint chroma_stride,
                                 __global uchar* restrict dst, uint dst_offset, uint dst_stride, uint bx, uint by,
                                 float y_offset, float y_scale, float r_cr, float g_cb, float g_cr, float b_cb)
{
    const float3 terms =
        chroma_terms(vload2(0, chroma + chroma_offset + by * chroma_stride + 2 * bx), r_cr, g_cb, g_cr, b_cb);
    for (uint row = 0; row < 2; ++row) {
        const uint y = 2 * by + row;
        const uchar2 y2 = vload2(0, luma + luma_offset + y * luma_stride + 2 * bx);
        const uchar4 left = abgr_pixel(luma_term(y2.x, y_offset, y_scale), terms);
        const uchar4 right = abgr_pixel(luma_term(y2.y, y_offset, y_scale), terms);
        vstore8((uchar8)(left, right), 0, dst + dst_offset + y * dst_stride + 8 * bx);
    }
}

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
    nv12_block2x2(luma, luma_offset, luma_stride, chroma, chroma_offset, chroma_stride, dst, dst_offset, dst_stride,
                  bx, by, y_offset, y_scale, r_cr, g_cb, g_cr, b_cb);
}

// N bytes from `p`, 16-byte aligned (N = 8 or 16), into `bytes`.
#define LOAD_ALIGNED(N, p, bytes)                                                        \
    do {                                                                                 \
        if ((N) == 16)                                                                   \
            vstore16(as_uchar16(*(__global const uint4*)(p)), 0, bytes);                 \
        else                                                                             \
            vstore8(as_uchar8(*(__global const uint2*)(p)), 0, bytes);                   \
    } while (0)

static inline __attribute__((always_inline))
void nv12_block_body(__global const uchar* restrict luma, uint luma_offset, uint luma_stride,
                     __global const uchar* restrict chroma, uint chroma_offset, uint chroma_stride,
                     __global uchar* restrict dst, uint dst_offset, uint dst_stride, uint width, uint height,
                     float y_offset, float y_scale, float r_cr, float g_cb, float g_cr, float b_cb, const uint n)
{
    const uint blocks = width / 2;
    const uint b0 = get_global_id(0) * (n / 2);
    const uint by = get_global_id(1);
    if (b0 >= blocks || by >= height / 2)
        return;
    const bool aligned = ((luma_offset | luma_stride | chroma_offset | chroma_stride | dst_offset | dst_stride) & 15u) == 0;
    if (!aligned || b0 + n / 2 > blocks) {
        const uint end = min(b0 + n / 2, blocks);
        for (uint bx = b0; bx < end; ++bx)
            nv12_block2x2(luma, luma_offset, luma_stride, chroma, chroma_offset, chroma_stride, dst, dst_offset,
                          dst_stride, bx, by, y_offset, y_scale, r_cr, g_cb, g_cr, b_cb);
        return;
    }
    // Pixel 2 b0 is at byte 2 b0 = n get_global_id(0) of its Y row and its chroma row
    // and at byte 8 b0 of its output row: all multiples of 16 (8 for the Y and chroma
    // rows at n = 8), as are the offsets and strides.
    uchar pairs[16];
    LOAD_ALIGNED(n, chroma + chroma_offset + by * chroma_stride + 2 * b0, pairs);
    float3 terms[8];
#pragma unroll
    for (uint i = 0; i < n / 2; ++i)
        terms[i] = chroma_terms((uchar2)(pairs[2 * i], pairs[2 * i + 1]), r_cr, g_cb, g_cr, b_cb);
#pragma unroll
    for (uint row = 0; row < 2; ++row) {
        const uint y = 2 * by + row;
        uchar codes[16];
        LOAD_ALIGNED(n, luma + luma_offset + y * luma_stride + 2 * b0, codes);
        __global uint4* out = (__global uint4*)(dst + dst_offset + y * dst_stride + 8 * b0);
#pragma unroll
        for (uint q = 0; q < n / 4; ++q) {
            uint4 quad;
            quad.x = as_uint(abgr_pixel(luma_term(codes[4 * q], y_offset, y_scale), terms[2 * q]));
            quad.y = as_uint(abgr_pixel(luma_term(codes[4 * q + 1], y_offset, y_scale), terms[2 * q]));
            quad.z = as_uint(abgr_pixel(luma_term(codes[4 * q + 2], y_offset, y_scale), terms[2 * q + 1]));
            quad.w = as_uint(abgr_pixel(luma_term(codes[4 * q + 3], y_offset, y_scale), terms[2 * q + 1]));
            out[q] = quad;
        }
    }
}

#define NV12_BLOCK_KERNEL(n)                                                                                      \
    __kernel void nv12_to_abgr_block##n(__global const uchar* restrict luma, uint luma_offset, uint luma_stride,   \
                                        __global const uchar* restrict chroma, uint chroma_offset,                \
                                        uint chroma_stride, __global uchar* restrict dst, uint dst_offset,        \
                                        uint dst_stride, uint width, uint height, float y_offset, float y_scale,  \
                                        float r_cr, float g_cb, float g_cr, float b_cb)                           \
    {                                                                                                             \
        nv12_block_body(luma, luma_offset, luma_stride, chroma, chroma_offset, chroma_stride, dst, dst_offset,    \
                        dst_stride, width, height, y_offset, y_scale, r_cr, g_cb, g_cr, b_cb, n);                 \
    }

NV12_BLOCK_KERNEL(8)
NV12_BLOCK_KERNEL(16)

#ifdef __IMAGE_SUPPORT__
// abgr_to_y and nv12_to_y writing their R8 output as an image, where the next stage
// reads it as one (include/framecl/plugin.h, framecl_plan_request): nothing is copied
// between the two.
__kernel void abgr_to_y_image(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const uint4 p = convert_uint4(vload4(0, src + src_offset + y * src_stride + 4 * x));
    write_imageui(dst, (int2)(x, y), (uint4)((299u * p.x + 587u * p.y + 114u * p.z + 500u) / 1000u, 0, 0, 1));
}

__kernel void nv12_to_y_image(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    write_imageui(dst, (int2)(x, y), (uint4)(src[src_offset + y * src_stride + x], 0, 0, 1));
}
#endif

// abgr_to_nv12: ABGR8888 to NV12, one work item per 2x2 block, with the matrix and range
// folded by the plugin into integer weights in units of 2^-16 (plugins/color/color.cpp,
// docs/filters.md): each pixel's Y is (y_r R + y_g G + y_b B + y_offset 2^16 + 2^15) >> 16,
// and the block's Cb and Cr are the same of the block's sums of R, G and B with the Cb or
// Cr weights and 128 as offset, shifted by 18 (16 and the 4 pixels' 2), each clamped to
// 0..255. Every shift is of an int, arithmetic: halves toward +infinity. Alpha is
// ignored. Reads 16 bytes and writes 6 per work item, in bytes and pairs: any offset and
// stride will do.

static inline int nv12_weigh(int3 rgb, int3 weights, int offset, int shift)
{
    return clamp((weights.x * rgb.x + weights.y * rgb.y + weights.z * rgb.z + (offset << shift) +
                  (1 << (shift - 1))) >> shift,
                 0, 255);
}

__kernel void abgr_to_nv12(__global const uchar* restrict src, uint src_offset, uint src_stride,
                           __global uchar* restrict luma, uint luma_offset, uint luma_stride,
                           __global uchar* restrict chroma, uint chroma_offset, uint chroma_stride, uint width,
                           uint height, int y_r, int y_g, int y_b, int y_offset, int u_r, int u_g, int u_b, int v_r,
                           int v_g, int v_b)
{
    const uint bx = get_global_id(0);
    const uint by = get_global_id(1);
    if (bx >= width / 2 || by >= height / 2)
        return;
    const int3 y_weights = (int3)(y_r, y_g, y_b);
    int3 sum = 0;
    for (uint row = 0; row < 2; ++row) {
        const uint y = 2 * by + row;
        const uchar8 pair = vload8(0, src + src_offset + y * src_stride + 8 * bx);
        const int3 left = convert_int3(pair.s012), right = convert_int3(pair.s456);
        sum += left + right;
        vstore2((uchar2)(nv12_weigh(left, y_weights, y_offset, 16), nv12_weigh(right, y_weights, y_offset, 16)), 0,
                luma + luma_offset + y * luma_stride + 2 * bx);
    }
    vstore2((uchar2)(nv12_weigh(sum, (int3)(u_r, u_g, u_b), 128, 18), nv12_weigh(sum, (int3)(v_r, v_g, v_b), 128, 18)),
            0, chroma + chroma_offset + by * chroma_stride + 2 * bx);
}
