// The loads and stores of the daemon's fused kernels (docs/architecture.md, "Fusion"):
// a fused kernel loads each pixel of its run's input once with framecl_load_<format>,
// hands it through the stages' pointwise functions and stores the last one's output with
// framecl_store_<format>. A pixel is a uint4 of its channel codes (include/framecl/plugin.h,
// framecl_pointwise). Any plane offset and stride will do: where they are multiples of the
// pixel's size, a pixel is one aligned load or store, else it goes byte by byte, as the
// filters' own kernels do.

uint4 framecl_load_r8(__global const uchar* restrict plane, uint offset, uint stride, uint x, uint y)
{
    return (uint4)(plane[offset + y * stride + x], 0, 0, 0);
}

uint4 framecl_load_r16(__global const uchar* restrict plane, uint offset, uint stride, uint x, uint y)
{
    __global const uchar* at = plane + offset + y * stride + 2 * x;
    const ushort v = ((offset | stride) & 1u) == 0 ? *(__global const ushort*)at : as_ushort(vload2(0, at));
    return (uint4)(v, 0, 0, 0);
}

uint4 framecl_load_abgr8888(__global const uchar* restrict plane, uint offset, uint stride, uint x, uint y)
{
    __global const uchar* at = plane + offset + y * stride + 4 * x;
    return convert_uint4(((offset | stride) & 3u) == 0 ? *(__global const uchar4*)at : vload4(0, at));
}

uint4 framecl_load_abgr16161616(__global const uchar* restrict plane, uint offset, uint stride, uint x, uint y)
{
    __global const uchar* at = plane + offset + y * stride + 8 * x;
    return convert_uint4(((offset | stride) & 7u) == 0 ? *(__global const ushort4*)at : as_ushort4(vload8(0, at)));
}

// (Y, Cb, Cr, 0): the pixel's Y and its 2x2 block's chroma pair.
uint4 framecl_load_nv12(__global const uchar* restrict luma, uint luma_offset, uint luma_stride,
                        __global const uchar* restrict chroma, uint chroma_offset, uint chroma_stride, uint x, uint y)
{
    const uchar2 pair = vload2(0, chroma + chroma_offset + (y / 2) * chroma_stride + (x & ~1u));
    return (uint4)(luma[luma_offset + y * luma_stride + x], pair.x, pair.y, 0);
}

void framecl_store_r8(__global uchar* restrict plane, uint offset, uint stride, uint x, uint y, uint4 pixel)
{
    plane[offset + y * stride + x] = (uchar)pixel.x;
}

void framecl_store_r16(__global uchar* restrict plane, uint offset, uint stride, uint x, uint y, uint4 pixel)
{
    __global uchar* at = plane + offset + y * stride + 2 * x;
    if (((offset | stride) & 1u) == 0)
        *(__global ushort*)at = (ushort)pixel.x;
    else
        vstore2(as_uchar2((ushort)pixel.x), 0, at);
}

void framecl_store_abgr8888(__global uchar* restrict plane, uint offset, uint stride, uint x, uint y, uint4 pixel)
{
    __global uchar* at = plane + offset + y * stride + 4 * x;
    if (((offset | stride) & 3u) == 0)
        *(__global uchar4*)at = convert_uchar4(pixel);
    else
        vstore4(convert_uchar4(pixel), 0, at);
}

void framecl_store_abgr16161616(__global uchar* restrict plane, uint offset, uint stride, uint x, uint y, uint4 pixel)
{
    __global uchar* at = plane + offset + y * stride + 8 * x;
    if (((offset | stride) & 7u) == 0)
        *(__global ushort4*)at = convert_ushort4(pixel);
    else
        vstore8(as_uchar8(convert_ushort4(pixel)), 0, at);
}

// The 2x2 block at (x, y), x and y even, its pixels row by row: each pixel's Y, and the
// first pixel's Cb and Cr as the block's pair.
void framecl_store_nv12(__global uchar* restrict luma, uint luma_offset, uint luma_stride,
                        __global uchar* restrict chroma, uint chroma_offset, uint chroma_stride, uint x, uint y,
                        __private const uint4* block)
{
    vstore2((uchar2)((uchar)block[0].x, (uchar)block[1].x), 0, luma + luma_offset + y * luma_stride + x);
    vstore2((uchar2)((uchar)block[2].x, (uchar)block[3].x), 0, luma + luma_offset + (y + 1) * luma_stride + x);
    vstore2((uchar2)((uchar)block[0].y, (uchar)block[0].z), 0, chroma + chroma_offset + (y / 2) * chroma_stride + x);
}
