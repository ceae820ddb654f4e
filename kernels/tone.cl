// A tone curve from ABGR16161616 to ABGR8888 (docs/filters.md, "`tone`: tone curve").
//
// The stage's parameter block holds n, the curve's number of points (2 to 4096), then n
// ushorts L: its outputs in units of 1/65535 at inputs evenly spaced over 0 to 65535. A
// channel v is interpolated between the two points around it, in integers:
//   t = v (n - 1), i = t / 65535, f = t % 65535,
//   w = (L[i] (65535 - f) + L[min(i + 1, n - 1)] f + 32767) / 65535,
// then brought to 8 bits, (w 255 + 32767) / 65535: both rounded half up. The sum stays
// in 32 bits: at most 65535 (65535 - f) + 65535 f + 32767 < 2^32, so neither product
// needs 64 (a 64-bit division is many instructions on a GPU). Alpha is taken to 8 bits
// the same way, without the curve. The kernel and the pointwise function compute a pixel
// with the one helper, tone_pixel, so a fused run gives the kernel's bytes.
//
// tone: one work item per pixel. A pixel is one 8-byte load and one 4-byte store where
// the offsets and strides are multiples of those, else byte by byte: any will do.
// tone_pointwise: the same of one pixel, ABGR16161616 (R, G, B, A) in, ABGR8888 out
// (include/framecl/plugin.h, framecl_pointwise), block 1x1.

static inline uchar tone_to_8(uint w)
{
    return (uchar)((w * 255u + 32767u) / 65535u);
}

static inline uchar tone_channel(uint v, uint n, __global const ushort* restrict points)
{
    const uint t = v * (n - 1u);
    const uint i = t / 65535u;
    const uint f = t - i * 65535u;
    const uint sum = (uint)points[i] * (65535u - f) + (uint)points[min(i + 1u, n - 1u)] * f + 32767u;
    return tone_to_8(sum / 65535u);
}

// One pixel's four channels, each an 8-bit code.
static inline uint4 tone_pixel(uint4 in, __global const uint* restrict params)
{
    const uint n = params[0];
    __global const ushort* points = (__global const ushort*)(params + 1);
    return (uint4)(tone_channel(in.x, n, points), tone_channel(in.y, n, points), tone_channel(in.z, n, points),
                   tone_to_8(in.w));
}

#if FRAMECL_KERNEL_WANTED(tone)
__kernel void tone(__global const uchar* restrict src, uint src_offset, uint src_stride, __global uchar* restrict dst,
                   uint dst_offset, uint dst_stride, uint width, uint height, __global const uint* restrict params)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    __global const uchar* at = src + src_offset + y * src_stride + 8 * x;
    const bool aligned_in = ((src_offset | src_stride) & 7u) == 0;
    const uint4 in = convert_uint4(aligned_in ? *(__global const ushort4*)at : as_ushort4(vload8(0, at)));
    const uchar4 out = convert_uchar4(tone_pixel(in, params));
    __global uchar* to = dst + dst_offset + y * dst_stride + 4 * x;
    if (((dst_offset | dst_stride) & 3u) == 0)
        *(__global uchar4*)to = out;
    else
        vstore4(out, 0, to);
}
#endif

void tone_pointwise(__private uint4* pixels, uint x, uint y, __global const uchar* params)
{
    pixels[0] = tone_pixel(pixels[0], (__global const uint*)params);
}
