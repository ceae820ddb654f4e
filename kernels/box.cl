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
//   rows16     box_rows16_r8 (R8 only): one pass, 16x4 outputs per work item. For a box
//              at most 3 wide, each input row is one 16-byte load (an aligned uint4 when
//              the planes' offsets and strides are multiples of 16) and a byte load on
//              each side; the vertical window sums of the 16 columns and their two
//              neighbours slide down the block (add the row entering, subtract the row
//              leaving), and the horizontal sum is two lane shifts. The sums live in
//              16-bit lanes of 32-bit words, two per word, so the pixels never leave
//              the words they were loaded in: NVIDIA's compiler turns a uchar16
//              reinterpreted from a uint4 back into 4-byte loads. Wider boxes, and
//              blocks reaching past the last column, sum column by column instead.

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

// The vertical window sums of 16 columns x0 .. x0 + 15, as 16-bit lanes of 32-bit
// words (at most 63 x 255 = 16065 each, so no lane carries into the next): `even`, word
// j holding columns 4j (low lane) and 4j + 2 (high lane); `odd`, 4j + 1 and 4j + 3. And
// those of the columns x0 - 1 and x0 + 16 beside them.
typedef struct {
    uint4 even;
    uint4 odd;
    uint before;
    uint after;
} ColumnSums;

// Row y of the image (any y: `border` applies, and to the two side pixels) as
// ColumnSums of one row: its 16 pixels from x0 (x0 + 16 <= width) by one 16-byte load,
// an aligned uint4 where `aligned` says src_offset and src_stride are multiples of 16
// (x0 is one), and the pixels x0 - 1 and x0 + 16 where `sides` asks for them.
ColumnSums rows16_row(__global const uchar* src, uint src_offset, uint src_stride, int width, int height,
                      int x0, int y, uint border, uint border_value, bool aligned, bool sides)
{
    ColumnSums row;
    const int sy = border_index(y, height, border);
    if (sy < 0) {
        row.even = row.odd = (uint4)(border_value * 0x00010001u);
        row.before = row.after = border_value;
        return row;
    }
    __global const uchar* at = src + src_offset + (uint)sy * src_stride;
    const uint4 pixels = aligned ? *(__global const uint4*)(at + x0) : as_uint4(vload16(0, at + x0));
    row.even = pixels & 0x00ff00ffu;
    row.odd = (pixels >> 8) & 0x00ff00ffu;
    row.before = row.after = 0;
    if (sides) {
        const int bx = border_index(x0 - 1, width, border);
        const int ax = border_index(x0 + 16, width, border);
        row.before = bx < 0 ? border_value : at[bx];
        row.after = ax < 0 ? border_value : at[ax];
    }
    return row;
}

ColumnSums column_sums_add(ColumnSums a, ColumnSums b)
{
    a.even += b.even;
    a.odd += b.odd;
    a.before += b.before;
    a.after += b.after;
    return a;
}

// a - b, where every lane of a is at least b's (b's rows are among a's).
ColumnSums column_sums_sub(ColumnSums a, ColumnSums b)
{
    a.even -= b.even;
    a.odd -= b.odd;
    a.before -= b.before;
    a.after -= b.after;
    return a;
}

// The vertical window sum at column x of output row y, column x given by `border`
// (sx < 0: outside the image under a constant border).
uint rows16_column(__global const uchar* src, uint src_offset, uint src_stride, int width, int height,
                   int x, int top, uint box_height, uint border, uint border_value)
{
    const int sx = border_index(x, width, border);
    if (sx < 0)
        return box_height * border_value;
    uint sum = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = border_index(top + j, height, border);
        sum += sy < 0 ? border_value : src[src_offset + (uint)sy * src_stride + (uint)sx];
    }
    return sum;
}

// The outputs x0 .. min(x0 + 16, width) - 1 of rows y0 .. y0 + rows - 1 (those in the
// image), one row at a time: the window's column sums, sliding along the row (add the
// column entering, subtract the column leaving). Any box width, any position.
void rows16_by_columns(__global const uchar* src, uint src_offset, uint src_stride, __global uchar* dst,
                       uint dst_offset, uint dst_stride, uint width, uint height, uint x0, uint y0,
                       uint rows, uint box_width, uint box_height, uint border, uint border_value)
{
    const int w = (int)width, h = (int)height;
    const int left = (int)(box_width / 2);
    const uint count = box_width * box_height;
    for (uint y = y0; y < min(y0 + rows, height); ++y) {
        const int top = (int)y - (int)(box_height / 2);
        uint sum = 0;
        for (int i = 0; i < (int)box_width; ++i)
            sum += rows16_column(src, src_offset, src_stride, w, h, (int)x0 - left + i, top, box_height, border,
                                 border_value);
        for (uint x = x0;;) {
            dst[dst_offset + y * dst_stride + x] = (uchar)((sum + count / 2) / count);
            if (++x >= min(x0 + 16, width))
                break;
            sum += rows16_column(src, src_offset, src_stride, w, h, (int)x - left + (int)box_width - 1, top,
                                 box_height, border, border_value);
            sum -= rows16_column(src, src_offset, src_stride, w, h, (int)x - left - 1, top, box_height, border,
                                 border_value);
        }
    }
}

// The 16 means of output row y from the window's column sums: the horizontal sums in
// lanes (columns 4j - 1 and 4j + 1 are left of the even ones, 4j + 2 and 4j + 4 right
// of the odd ones), plus count/2 in each lane (`rounding`), divided by multiplying, and
// put back into bytes: column 4j in bits 0-7 of word j, 4j + 1 in bits 8-15, 4j + 2 in
// 16-23, 4j + 3 in 24-31. One aligned 16-byte store where `aligned` allows.
void rows16_store(ColumnSums sums, bool before, bool after, uint rounding, uint4 reciprocal,
                  __global uchar* out, bool aligned)
{
    uint4 even = sums.even + rounding, odd = sums.odd + rounding;
    if (before) {
        even += (sums.odd << 16) | ((uint4)(sums.before << 16, sums.odd.s012) >> 16);
        odd += sums.even;
    }
    if (after) {
        even += sums.odd;
        odd += (sums.even >> 16) | ((uint4)(sums.even.s123, sums.after) << 16);
    }
    const uint4 mean_even_low = mul_hi((even & 0xffffu) << 1, reciprocal);
    const uint4 mean_even_high = mul_hi((even >> 16) << 1, reciprocal);
    const uint4 mean_odd_low = mul_hi((odd & 0xffffu) << 1, reciprocal);
    const uint4 mean_odd_high = mul_hi((odd >> 16) << 1, reciprocal);
    const uint4 means = mean_even_low | (mean_odd_low << 8) | (mean_even_high << 16) | (mean_odd_high << 24);
    if (aligned)
        *(__global uint4*)out = means;
    else
        vstore16(as_uchar16(means), 0, out);
}

// rows16, R8: 16 x `rows` outputs from (x0, y0) (`rows` a constant after inlining).
// For a box at most 3 wide and a block inside the width: each input row is 16 + 2 bytes,
// each output row 16 bytes written with one aligned store where dst_offset and
// dst_stride allow. The column sums slide down the block (add the row entering,
// subtract the row leaving: an L1 hit). The window sums stay in 16-bit lanes (at most 3 x 63 x 255 = 48195, plus
// count/2); the mean divides by multiplying: mul_hi(2n, ceil(2^31 / count)) is
// floor(n / count) for n < 2^17 and count <= 189, as here.
inline void rows16_block(__global const uchar* restrict src, uint src_offset, uint src_stride,
                         __global uchar* restrict dst, uint dst_offset, uint dst_stride, uint width,
                         uint height, uint box_width, uint box_height, uint border, uint border_value,
                         uint x0, uint y0, const uint rows)
{
    if (x0 >= width || y0 >= height)
        return;
    if (box_width > 3 || x0 + 16 > width) {
        rows16_by_columns(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, x0, y0,
                          rows, box_width, box_height, border, border_value);
        return;
    }
    const bool src_aligned = ((src_offset | src_stride) & 15u) == 0;
    const bool dst_aligned = ((dst_offset | dst_stride) & 15u) == 0;
    const int w = (int)width, h = (int)height;
    const bool before = box_width / 2 > 0;      // the window takes column x - 1
    const bool after = (box_width - 1) / 2 > 0; // and column x + 1
    const bool sides = before || after;
    const int top = (int)y0 - (int)(box_height / 2);
    const uint count = box_width * box_height;
    const uint4 reciprocal = (uint4)((0x80000000u + count - 1) / count);
    const uint rounding = (count / 2) * 0x00010001u;
    __global uchar* out = dst + dst_offset + y0 * dst_stride + x0;

    ColumnSums sums = rows16_row(src, src_offset, src_stride, w, h, (int)x0, top, border, border_value,
                                 src_aligned, sides);
    for (int j = 1; j < (int)box_height; ++j)
        sums = column_sums_add(sums, rows16_row(src, src_offset, src_stride, w, h, (int)x0, top + j, border,
                                                border_value, src_aligned, sides));
    // Not unrolled: fewer registers for the same speed on an H100 (0.043 against 0.044
    // ms for 3x3 at 7680x4320).
#pragma unroll 1
    for (uint i = 0; i < rows; ++i) {
        if (y0 + i >= height)
            break;
        if (i > 0) {
            sums = column_sums_add(sums, rows16_row(src, src_offset, src_stride, w, h, (int)x0,
                                                    top + (int)(i + box_height) - 1, border, border_value,
                                                    src_aligned, sides));
            sums = column_sums_sub(sums, rows16_row(src, src_offset, src_stride, w, h, (int)x0,
                                                    top + (int)i - 1, border, border_value, src_aligned,
                                                    sides));
        }
        rows16_store(sums, before, after, rounding, reciprocal, out + i * dst_stride, dst_aligned);
    }
}

// rows16, R8: 16x4 outputs per work item, (x0, y0) = (16 * id0, 4 * id1)
// (plugins/box/box.cpp plans the dispatch with the same numbers).
__kernel void box_rows16_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                            __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                            uint width, uint height, uint box_width, uint box_height,
                            uint border, uint border_value)
{
    rows16_block(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, box_width, box_height,
                 border, border_value, 16 * get_global_id(0), 4 * get_global_id(1), 4);
}
