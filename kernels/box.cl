// The normalised box filter (OpenCV's blur): each output pixel is the mean of the
// box_width x box_height window whose top-left corner is (x - box_width/2,
// y - box_height/2), per channel, rounded to nearest with halves up:
// (sum + count/2) / count with count = box_width * box_height. Pixels outside the
// image follow `border`. The sums are exact integers (at most 63 * 63 * 255), so every
// variant gives the CPU reference's result on every pixel.
//
// Two variants (plugins/box/box.cpp chooses):
//   direct     box_direct_*: the guide's baseline (§10.2.1), the whole window per pixel
//   separable  box_rows_* then box_columns_*: the window split into a horizontal pass
//              and a vertical pass, as §10.2.1 splits its 8x8 box into two passes to
//              cut the reads per output pixel. The intermediate holds exact horizontal
//              sums, one 16-bit element per channel.

// Border rules, numbered as `borders` in plugins/box/box.cpp.
#define BORDER_REPLICATE 0u
#define BORDER_REFLECT101 1u
#define BORDER_CONSTANT 2u

// The index inside [0, size) that stands for `i` under `border`, or -1 outside the
// image under a constant border (the caller then uses the border value).
int border_index(int i, int size, uint border)
{
    if (i >= 0 && i < size)
        return i;
    if (border == BORDER_CONSTANT)
        return -1;
    if (border == BORDER_REPLICATE)
        return clamp(i, 0, size - 1);
    if (size == 1)
        return 0;
    // Reflect101 repeats with period 2 (size - 1), for windows wider than the image.
    const int period = 2 * (size - 1);
    int m = i % period;
    if (m < 0)
        m += period;
    return m < size ? m : period - m;
}

// The 16-bit window sums of row `y` of the intermediate (an R16 plane).
__global const ushort* sum_row(__global const uchar* sums, uint sums_offset, uint sums_stride, int y)
{
    return (__global const ushort*)(sums + sums_offset + (uint)y * sums_stride);
}

// direct, R8: one work item per pixel.
// Reads box_width * box_height bytes and writes 1 byte per output pixel.
__kernel void box_direct_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                            __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                            uint width, uint height, uint box_width, uint box_height,
                            uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = (int)x - (int)(box_width / 2);
    const int top = (int)y - (int)(box_height / 2);
    uint sum = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = border_index(top + j, height, border);
        if (sy < 0) {
            sum += box_width * border_value;
            continue;
        }
        __global const uchar* row = src + src_offset + (uint)sy * src_stride;
        for (int i = 0; i < (int)box_width; ++i) {
            const int sx = border_index(left + i, width, border);
            sum += sx < 0 ? border_value : row[sx];
        }
    }
    const uint count = box_width * box_height;
    dst[dst_offset + y * dst_stride + x] = (uchar)((sum + count / 2) / count);
}

// direct, ABGR8888: one work item per pixel, the four channels summed side by side.
// Reads 4 * box_width * box_height bytes and writes 4 bytes per output pixel.
__kernel void box_direct_abgr(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                              uint width, uint height, uint box_width, uint box_height,
                              uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = (int)x - (int)(box_width / 2);
    const int top = (int)y - (int)(box_height / 2);
    uint4 sum = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = border_index(top + j, height, border);
        if (sy < 0) {
            sum += box_width * border_value;
            continue;
        }
        __global const uchar* row = src + src_offset + (uint)sy * src_stride;
        for (int i = 0; i < (int)box_width; ++i) {
            const int sx = border_index(left + i, width, border);
            sum += sx < 0 ? (uint4)(border_value) : convert_uint4(vload4(sx, row));
        }
    }
    const uint count = box_width * box_height;
    vstore4(convert_uchar4((sum + count / 2) / count), x, dst + dst_offset + y * dst_stride);
}

// separable, first pass, R8: the horizontal window sum of each pixel, into an R16
// intermediate of the image's size.
// Reads box_width bytes and writes 2 bytes per output pixel.
__kernel void box_rows_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                          __global uchar* restrict sums, uint sums_offset, uint sums_stride,
                          uint width, uint height, uint box_width, uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = (int)x - (int)(box_width / 2);
    __global const uchar* row = src + src_offset + y * src_stride;
    uint sum = 0;
    for (int i = 0; i < (int)box_width; ++i) {
        const int sx = border_index(left + i, width, border);
        sum += sx < 0 ? border_value : row[sx];
    }
    ((__global ushort*)(sums + sums_offset + y * sums_stride))[x] = (ushort)sum;
}

// separable, second pass, R8: the vertical sum of the horizontal sums, and the mean.
// A row outside the image under a constant border adds box_width * border_value.
// Reads 2 * box_height bytes and writes 1 byte per output pixel.
__kernel void box_columns_r8(__global const uchar* restrict sums, uint sums_offset, uint sums_stride,
                             __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                             uint width, uint height, uint box_width, uint box_height,
                             uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int top = (int)y - (int)(box_height / 2);
    uint sum = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = border_index(top + j, height, border);
        sum += sy < 0 ? box_width * border_value : sum_row(sums, sums_offset, sums_stride, sy)[x];
    }
    const uint count = box_width * box_height;
    dst[dst_offset + y * dst_stride + x] = (uchar)((sum + count / 2) / count);
}

// separable, first pass, ABGR8888: the horizontal window sums of each pixel's four
// channels, into an R16 intermediate four times the image's width.
// Reads 4 * box_width bytes and writes 8 bytes per output pixel.
__kernel void box_rows_abgr(__global const uchar* restrict src, uint src_offset, uint src_stride,
                            __global uchar* restrict sums, uint sums_offset, uint sums_stride,
                            uint width, uint height, uint box_width, uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = (int)x - (int)(box_width / 2);
    __global const uchar* row = src + src_offset + y * src_stride;
    uint4 sum = 0;
    for (int i = 0; i < (int)box_width; ++i) {
        const int sx = border_index(left + i, width, border);
        sum += sx < 0 ? (uint4)(border_value) : convert_uint4(vload4(sx, row));
    }
    vstore4(convert_ushort4(sum), x, (__global ushort*)(sums + sums_offset + y * sums_stride));
}

// separable, second pass, ABGR8888: the vertical sums of the four channels' horizontal
// sums, and their means.
// Reads 8 * box_height bytes and writes 4 bytes per output pixel.
__kernel void box_columns_abgr(__global const uchar* restrict sums, uint sums_offset, uint sums_stride,
                               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                               uint width, uint height, uint box_width, uint box_height,
                               uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int top = (int)y - (int)(box_height / 2);
    uint4 sum = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = border_index(top + j, height, border);
        sum += sy < 0 ? (uint4)(box_width * border_value)
                      : convert_uint4(vload4(x, sum_row(sums, sums_offset, sums_stride, sy)));
    }
    const uint count = box_width * box_height;
    vstore4(convert_uchar4((sum + count / 2) / count), x, dst + dst_offset + y * dst_stride);
}
