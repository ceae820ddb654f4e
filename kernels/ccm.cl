// A 3x3 colour-correction matrix with offsets on ABGR16161616 (docs/filters.md,
// "`ccm`: colour-correction matrix").
//
// The stage's parameter block holds twelve ints in units of 2^-12: the matrix row by row
// (output R, G, B), then the offsets. Each output channel is
// clamp((sum of weight x input + offset + 2^11) >> 12, 0, 65535), the shift arithmetic
// (halves toward +infinity), summed in 64 bits: a weight up to 8 x 2^12 times 65535,
// three times, is past 32. Alpha is copied. The kernel and the pointwise function compute
// a pixel with the one helper, ccm_pixel, so a fused run gives the kernel's bytes.
//
// ccm: one work item per pixel. A pixel is one 8-byte load and store where the offsets
// and strides are multiples of 8, else byte by byte: any will do.
// ccm_pointwise: the same of one pixel (R, G, B, A) (include/framecl/plugin.h,
// framecl_pointwise), block 1x1.

static inline uint4 ccm_pixel(uint4 in, __global const int* restrict params)
{
    const long3 rgb = convert_long3(in.xyz);
    uint out[3];
    for (int c = 0; c < 3; ++c) {
        const long sum = params[3 * c] * rgb.x + params[3 * c + 1] * rgb.y + params[3 * c + 2] * rgb.z +
                         params[9 + c] + 2048;
        out[c] = (uint)clamp(sum >> 12, 0L, 65535L);
    }
    return (uint4)(out[0], out[1], out[2], in.w);
}

#if FRAMECL_KERNEL_WANTED(ccm)
__kernel void ccm(__global const uchar* restrict src, uint src_offset, uint src_stride, __global uchar* restrict dst,
                  uint dst_offset, uint dst_stride, uint width, uint height, __global const int* restrict params)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    __global const uchar* at = src + src_offset + y * src_stride + 8 * x;
    const ushort4 in = ((src_offset | src_stride) & 7u) == 0 ? *(__global const ushort4*)at : as_ushort4(vload8(0, at));
    const ushort4 pixel = convert_ushort4(ccm_pixel(convert_uint4(in), params));
    __global uchar* to = dst + dst_offset + y * dst_stride + 8 * x;
    if (((dst_offset | dst_stride) & 7u) == 0)
        *(__global ushort4*)to = pixel;
    else
        vstore8(as_uchar8(pixel), 0, to);
}
#endif

void ccm_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
    pixels[0] = ccm_pixel(pixels[0], (__global const int*)params);
}
