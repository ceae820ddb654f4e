// Colour conversions.
//
// Each op has a pointwise function (include/framecl/plugin.h, "Pointwise stages") that
// the daemon may call from a fused kernel instead of running the op's kernels, and that
// must give their bytes: both compute a pixel through the same helpers below, with the
// same operations in the same order.
//
// Contraction of a * b + c into one fma is off for this file: where it is allowed, a
// compiler may contract at one call of a helper and not at another (the fused kernel
// inlines them into other code than these kernels do), and nv12_to_abgr's float results
// would then differ by a rounding. The file ends by setting it back to the default, for
// the files a fused program builds after it.
#pragma OPENCL FP_CONTRACT OFF

// abgr_to_y: DRM_FORMAT_ABGR8888 (bytes R, G, B, A in memory) to an R8 plane holding
// BT.601 luma, Y = round(0.299 R + 0.587 G + 0.114 B), halves rounded up. Computed in
// integers with the weights scaled by 1000, which is exact: no float rounding can make
// the GPU and the CPU reference disagree. No constants from the plugin.
// Reads 4 bytes and writes 1 byte per work item.
// abgr_to_y_pointwise: (R, G, B, A) to (Y, 0, 0, 0), block 1x1.

// The luma of one pixel (R, G, B, A).
static inline uint abgr_luma(uint4 p)
{
    return (299u * p.x + 587u * p.y + 114u * p.z + 500u) / 1000u;
}

#if FRAMECL_KERNEL_WANTED(abgr_to_y)
__kernel void abgr_to_y(__global const uchar* restrict src, uint src_offset, uint src_stride,
                        __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                        uint width, uint height)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const uint4 p = convert_uint4(vload4(0, src + src_offset + y * src_stride + 4 * x));
    dst[dst_offset + y * dst_stride + x] = (uchar)abgr_luma(p);
}
#endif

void abgr_to_y_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
    pixels[0] = (uint4)(abgr_luma(pixels[0]), 0, 0, 0);
}

// nv12_to_y: the Y plane (plane 0) of an NV12 frame, unchanged, as an R8 plane.
// Reads 1 byte and writes 1 byte per work item.
// nv12_to_y_pointwise: (Y, Cb, Cr, 0) to (Y, 0, 0, 0), block 1x1.

#if FRAMECL_KERNEL_WANTED(nv12_to_y)
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
#endif

void nv12_to_y_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
    pixels[0] = (uint4)(pixels[0].x, 0, 0, 0);
}

// nv12_to_abgr: NV12 (a Y plane, then a half-height plane of interleaved Cb, Cr bytes)
// to ABGR8888 with alpha 255. The plugin folds the matrix and range of
// docs/filters.md into one affine map per channel (plugins/color/color.cpp), whose six
// floats y_offset, y_scale, r_cr, g_cb, g_cr, b_cb, in this order, are the stage's
// parameter block; every kernel reads them once, at its start:
//   Y' = (Y - y_offset) * y_scale
//   R = Y' + r_cr * (Cr - 128), G = Y' - g_cb * (Cb - 128) - g_cr * (Cr - 128),
//   B = Y' + b_cb * (Cb - 128),
// each rounded to nearest and saturated to 0..255. Computed in float, so a channel may
// differ by 1 from the reference's double arithmetic. Every variant below, and
// nv12_to_abgr_pointwise, computes each pixel with the same three helpers, the same
// operations in the same order, so they give the same bytes.
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
//   nv12_to_abgr_pointwise (Y, Cb, Cr, 0) to (R, G, B, 255), block 1x1.

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

#if FRAMECL_KERNEL_WANTED(nv12_to_abgr)
__kernel void nv12_to_abgr(__global const uchar* restrict luma, uint luma_offset, uint luma_stride,
                           __global const uchar* restrict chroma, uint chroma_offset, uint chroma_stride,
                           __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                           uint width, uint height, __global const float* restrict params)
{
    const uint bx = get_global_id(0);
    const uint by = get_global_id(1);
    if (bx >= width / 2 || by >= height / 2)
        return;
    const float y_offset = params[0], y_scale = params[1];
    const float r_cr = params[2], g_cb = params[3], g_cr = params[4], b_cb = params[5];
    nv12_block2x2(luma, luma_offset, luma_stride, chroma, chroma_offset, chroma_stride, dst, dst_offset, dst_stride,
                  bx, by, y_offset, y_scale, r_cr, g_cb, g_cr, b_cb);
}
#endif

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
                     __global const float* restrict params, const uint n)
{
    const uint blocks = width / 2;
    const uint b0 = get_global_id(0) * (n / 2);
    const uint by = get_global_id(1);
    if (b0 >= blocks || by >= height / 2)
        return;
    const float y_offset = params[0], y_scale = params[1];
    const float r_cr = params[2], g_cb = params[3], g_cr = params[4], b_cb = params[5];
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
                                        uint dst_stride, uint width, uint height,                                 \
                                        __global const float* restrict params)                                    \
    {                                                                                                             \
        nv12_block_body(luma, luma_offset, luma_stride, chroma, chroma_offset, chroma_stride, dst, dst_offset,    \
                        dst_stride, width, height, params, n);                                                    \
    }

#if FRAMECL_KERNEL_WANTED(nv12_to_abgr_block8)
NV12_BLOCK_KERNEL(8)
#endif
#if FRAMECL_KERNEL_WANTED(nv12_to_abgr_block16)
NV12_BLOCK_KERNEL(16)
#endif

void nv12_to_abgr_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
    __global const float* map = (__global const float*)params;
    const float y_offset = map[0], y_scale = map[1];
    const float r_cr = map[2], g_cb = map[3], g_cr = map[4], b_cb = map[5];
    const uint4 p = pixels[0];
    const float3 terms = chroma_terms((uchar2)((uchar)p.y, (uchar)p.z), r_cr, g_cb, g_cr, b_cb);
    pixels[0] = convert_uint4(abgr_pixel(luma_term((uchar)p.x, y_offset, y_scale), terms));
}

#ifdef __IMAGE_SUPPORT__
// abgr_to_y and nv12_to_y writing their R8 output as an image, where the next stage
// reads it as one (include/framecl/plugin.h, framecl_plan_request): nothing is copied
// between the two.
#if FRAMECL_KERNEL_WANTED(abgr_to_y_image)
__kernel void abgr_to_y_image(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const uint4 p = convert_uint4(vload4(0, src + src_offset + y * src_stride + 4 * x));
    write_imageui(dst, (int2)(x, y), (uint4)(abgr_luma(p), 0, 0, 1));
}
#endif

#if FRAMECL_KERNEL_WANTED(nv12_to_y_image)
__kernel void nv12_to_y_image(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __write_only image2d_t dst, uint width, uint height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    write_imageui(dst, (int2)(x, y), (uint4)(src[src_offset + y * src_stride + x], 0, 0, 1));
}
#endif
#endif

// abgr_to_nv12: ABGR8888 to NV12, one work item per 2x2 block, with the matrix and range
// folded by the plugin into integer weights in units of 2^-16 (plugins/color/color.cpp,
// docs/filters.md), the stage's parameter block: ten ints y_r, y_g, y_b, y_offset, u_r,
// u_g, u_b, v_r, v_g, v_b, in this order. Each pixel's Y is
// (y_r R + y_g G + y_b B + y_offset 2^16 + 2^15) >> 16, and the block's Cb and Cr are the
// same of the block's sums of R, G and B with the Cb or Cr weights and 128 as offset,
// shifted by 18 (16 and the 4 pixels' 2), each clamped to 0..255. Every shift is of an
// int, arithmetic: halves toward +infinity. Alpha is ignored. Reads 16 bytes and writes
// 6 per work item, in bytes and pairs: any offset and stride will do.
// abgr_to_nv12_pointwise: the 2x2 block's four (R, G, B, A) to (Y, Cb, Cr, 0) each, the
// block's Cb and Cr in all four, block 2x2; integers throughout, so the sums' order is
// free.

static inline int nv12_weigh(int3 rgb, int3 weights, int offset, int shift)
{
    return clamp((weights.x * rgb.x + weights.y * rgb.y + weights.z * rgb.z + (offset << shift) +
                  (1 << (shift - 1))) >> shift,
                 0, 255);
}

// The Y code of one pixel's R, G, B (y_weights: y_r, y_g, y_b, y_offset), and the Cb, Cr
// codes of a block's sums of them.
static inline int nv12_luma_code(int3 rgb, int4 y_weights)
{
    return nv12_weigh(rgb, y_weights.xyz, y_weights.w, 16);
}

static inline uchar2 nv12_chroma_codes(int3 sum, int3 u_weights, int3 v_weights)
{
    return (uchar2)(nv12_weigh(sum, u_weights, 128, 18), nv12_weigh(sum, v_weights, 128, 18));
}

#if FRAMECL_KERNEL_WANTED(abgr_to_nv12)
__kernel void abgr_to_nv12(__global const uchar* restrict src, uint src_offset, uint src_stride,
                           __global uchar* restrict luma, uint luma_offset, uint luma_stride,
                           __global uchar* restrict chroma, uint chroma_offset, uint chroma_stride, uint width,
                           uint height, __global const int* restrict params)
{
    const uint bx = get_global_id(0);
    const uint by = get_global_id(1);
    if (bx >= width / 2 || by >= height / 2)
        return;
    const int4 y_weights = vload4(0, params);
    const int3 u_weights = vload3(0, params + 4), v_weights = vload3(0, params + 7);
    int3 sum = 0;
    for (uint row = 0; row < 2; ++row) {
        const uint y = 2 * by + row;
        const uchar8 pair = vload8(0, src + src_offset + y * src_stride + 8 * bx);
        const int3 left = convert_int3(pair.s012), right = convert_int3(pair.s456);
        sum += left + right;
        vstore2((uchar2)(nv12_luma_code(left, y_weights), nv12_luma_code(right, y_weights)), 0,
                luma + luma_offset + y * luma_stride + 2 * bx);
    }
    vstore2(nv12_chroma_codes(sum, u_weights, v_weights), 0, chroma + chroma_offset + by * chroma_stride + 2 * bx);
}
#endif

void abgr_to_nv12_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
    __global const int* weights = (__global const int*)params;
    const int4 y_weights = vload4(0, weights);
    const int3 u_weights = vload3(0, weights + 4), v_weights = vload3(0, weights + 7);
    int3 sum = 0;
    for (uint i = 0; i < 4; ++i)
        sum += convert_int3(pixels[i].xyz);
    const uint2 cbcr = convert_uint2(nv12_chroma_codes(sum, u_weights, v_weights));
    for (uint i = 0; i < 4; ++i)
        pixels[i] = (uint4)(nv12_luma_code(convert_int3(pixels[i].xyz), y_weights), cbcr.x, cbcr.y, 0);
}

// Back to the default for the files a fused program builds after this one.
#pragma OPENCL FP_CONTRACT DEFAULT
