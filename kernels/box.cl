// The normalised box filter (OpenCV's blur): each output pixel is the mean of the
// box_width x box_height window whose top-left corner is (x - box_width/2,
// y - box_height/2), per channel, rounded to nearest with halves up:
// (sum + count/2) / count with count = box_width * box_height. Pixels outside the
// image follow `border`. The sums are exact integers (at most 63 * 63 * 255), so every
// variant gives the CPU reference's result on every pixel.
//
// Five variants (plugins/box/box.cpp chooses):
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
//   running    box_running_r8 (R8 only): one pass, running sums in both directions,
//              so that a pixel costs the same whatever the box's size (below).
//   sweep      box_sweep_r8 (R8 only): running's sums, laid out for a GPU that waits
//              on each load (below).
//   image      box_rows_image_* then box_columns_image_r8 or box_columns_abgr:
//              separable, reading through images (at the end of this file).

// Border rules: framecl_border_index and FRAMECL_BORDER_* (kernels/prelude.cl, which the
// daemon builds in front of this file).

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
        const int sy = framecl_border_index(top + j, height, border);
        if (sy < 0) {
            sum += box_width * border_value;
            continue;
        }
        __global const uchar* row = src + src_offset + (uint)sy * src_stride;
        for (int i = 0; i < (int)box_width; ++i) {
            const int sx = framecl_border_index(left + i, width, border);
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
        const int sy = framecl_border_index(top + j, height, border);
        if (sy < 0) {
            sum += box_width * border_value;
            continue;
        }
        __global const uchar* row = src + src_offset + (uint)sy * src_stride;
        for (int i = 0; i < (int)box_width; ++i) {
            const int sx = framecl_border_index(left + i, width, border);
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
        const int sx = framecl_border_index(left + i, width, border);
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
        const int sy = framecl_border_index(top + j, height, border);
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
        const int sx = framecl_border_index(left + i, width, border);
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
        const int sy = framecl_border_index(top + j, height, border);
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
    const int sy = framecl_border_index(y, height, border);
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
        const int bx = framecl_border_index(x0 - 1, width, border);
        const int ax = framecl_border_index(x0 + 16, width, border);
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
    const int sx = framecl_border_index(x, width, border);
    if (sx < 0)
        return box_height * border_value;
    uint sum = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = framecl_border_index(top + j, height, border);
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
    // Not unrolled: fewer registers for the same speed (docs/benchmarks.md, "Choices
    // inside the kernels").
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

// running, R8: running sums in both directions, so that a pixel costs the same whatever
// the box's size. A work group of RUNNING_ITEMS items owns an output tile
// RUNNING_COLUMNS wide and `band_rows` high (a multiple of RUNNING_ROWS) and walks down
// it RUNNING_ROWS rows at a time, in three phases separated by barriers:
//   vertical    each item keeps the vertical window sums of 4 adjacent columns (two
//               16-bit lanes per 32-bit word) and slides them down a row by adding the
//               row entering the window and subtracting the row leaving it: two 4-byte
//               loads per 4 columns, the leaving row an L2 hit. Which pixels a group
//               of 4 reads (one word inside the image, else a byte per column by the
//               border rule) is worked out once per band. The tile's columns and
//               the box's width - 1 more (its halo) are covered, so the items
//               owning a second group of 4 take the halo. Each row's sums go to local
//               memory.
//   horizontal  each item takes 64 outputs of one row and slides the horizontal window
//               along them through local memory: the box's width reads for the first,
//               two for each of the others. Means go to local memory as bytes.
//   store       each item stores 4 bytes of each row, so a row leaves as 256
//               contiguous bytes.
// The column sums fit 16 bits (63 x 255 = 16065); a window sum (at most 63 x 63 x 255)
// is divided in float and corrected by its remainder, which is exact.
#define RUNNING_ITEMS 64    // work-group size along X (plugins/box/box.cpp)
#define RUNNING_COLUMNS 256 // output columns per work group: 4 per item
// Output rows per pass through the three phases: 8 rather than 16 halves the local
// memory per group (7.2 KB), so twice as many groups fit on a GPU's core; 4 gains
// nothing more (docs/benchmarks.md, "Choices inside the kernels").
#define RUNNING_ROWS 8
// Outputs per item in the horizontal phase: a block's rows shared out among the items.
#define RUNNING_SEGMENT (RUNNING_COLUMNS * RUNNING_ROWS / RUNNING_ITEMS)
// Sums held per row: the tile's columns, the halo (at most 62) and the alignment of its
// left part to 4 (at most 3 more), rounded up to groups of 4: 320; plus 2 so that the
// rows of the horizontal phase's items (RUNNING_SPAN / 2 words apart, an odd number)
// start in different local-memory banks.
#define RUNNING_SPAN 322
#define RUNNING_OUT_SPAN 260 // bytes per row of means: 65 words, so rows start in different banks

// Where a work item's group of 4 columns, from column x (a multiple of 4, any value),
// reads its pixels: the same for every row of its band, so worked out once.
typedef struct {
    bool inside;   // all 4 in the image: one 4-byte load
    int4 columns;  // otherwise each column under `border`, -1 for the border value
} ColumnGroup;

ColumnGroup running_group(int x, int width, uint border)
{
    ColumnGroup group;
    group.inside = x >= 0 && x + 4 <= width;
    group.columns = (int4)(framecl_border_index(x, width, border), framecl_border_index(x + 1, width, border),
                           framecl_border_index(x + 2, width, border), framecl_border_index(x + 3, width, border));
    return group;
}

// The 4 pixels of `group` in row `sy` (an index from framecl_border_index; -1 for a row
// of the constant border) as one word, the first column in its low byte: one 4-byte
// load inside the image (an aligned word where `aligned` says the plane's offset and
// stride are multiples of 4), else one byte load per column.
uint running_load4(__global const uchar* src, uint src_offset, uint src_stride, int sy, int x, ColumnGroup group,
                   uint border_value, bool aligned)
{
    if (sy < 0)
        return border_value * 0x01010101u;
    __global const uchar* row = src + src_offset + (uint)sy * src_stride;
    if (group.inside)
        return aligned ? *(__global const uint*)(row + x) : as_uint(vload4(0, row + x));
    const int4 c = group.columns;
    return (c.s0 < 0 ? border_value : (uint)row[c.s0]) | (c.s1 < 0 ? border_value : (uint)row[c.s1]) << 8 |
           (c.s2 < 0 ? border_value : (uint)row[c.s2]) << 16 | (c.s3 < 0 ? border_value : (uint)row[c.s3]) << 24;
}

// 4 pixels as two words of 16-bit lanes: `x` holds columns 0 and 2, `y` 1 and 3.
uint2 running_lanes(uint pixels)
{
    return (uint2)(pixels & 0x00ff00ffu, (pixels >> 8) & 0x00ff00ffu);
}

// The mean of `count` pixels summing to `sum`, halves up: (sum + count/2) / count, by a
// float reciprocal corrected by the remainder (sum + count/2 < 2^21, so the float
// quotient is within 1 of the true one).
uint running_mean(uint sum, uint count, float reciprocal)
{
    const uint n = sum + count / 2;
    uint q = convert_uint_rtz((float)n * reciprocal);
    if (q * count > n)
        --q;
    else if (n - q * count >= count)
        ++q;
    return q;
}

__kernel __attribute__((reqd_work_group_size(RUNNING_ITEMS, 1, 1)))
void box_running_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                    __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                    uint width, uint height, uint box_width, uint box_height,
                    uint border, uint border_value, uint band_rows)
{
    // Declared as words, so that both are 4-byte aligned for their word accesses (a
    // GPU faults on a misaligned one); read as ushorts and written as bytes below.
    __local uint sum_words[RUNNING_ROWS * RUNNING_SPAN / 2];
    __local uint mean_words[RUNNING_ROWS * RUNNING_OUT_SPAN / 4];
    __local ushort* sums = (__local ushort*)sum_words;
    __local uchar* means = (__local uchar*)mean_words;

    const uint item = get_local_id(0);
    // The group's first output column and row; get_global_id carries the offset of a
    // tile, which the daemon cuts at work-group boundaries.
    const int x0 = (int)((get_global_id(0) - item) / RUNNING_ITEMS * RUNNING_COLUMNS);
    const int y0 = (int)(get_global_id(1) * band_rows);
    if (y0 >= (int)height) // the whole group: no barrier is left waiting
        return;
    const int w = (int)width, h = (int)height;
    const int left = (int)(box_width / 2), top = (int)(box_height / 2);
    // Sums are kept from column xs, the window's left edge for x0 rounded down to a
    // multiple of 4, so that the groups of 4 are aligned as the tile is.
    const int left4 = (left + 3) & ~3;
    const int xs = x0 - left4;
    const int groups = (left4 + RUNNING_COLUMNS + (int)box_width - 1 - left + 3) / 4;
    const bool has_halo = (int)item + RUNNING_ITEMS < groups;
    const int xa = xs + 4 * (int)item, xb = xa + 4 * RUNNING_ITEMS;
    const ColumnGroup group_a = running_group(xa, w, border), group_b = running_group(xb, w, border);
    const bool src_aligned = ((src_offset | src_stride) & 3u) == 0;
    const bool dst_aligned = ((dst_offset | dst_stride) & 3u) == 0;
    const uint count = box_width * box_height;
    const float reciprocal = 1.0f / (float)count;

    // The vertical window of row y0: its box_height rows summed.
    uint2 column_a = 0, column_b = 0;
    for (int j = 0; j < (int)box_height; ++j) {
        const int sy = framecl_border_index(y0 - top + j, h, border);
        column_a += running_lanes(running_load4(src, src_offset, src_stride, sy, xa, group_a, border_value,
                                                src_aligned));
        if (has_halo)
            column_b += running_lanes(running_load4(src, src_offset, src_stride, sy, xb, group_b, border_value,
                                                    src_aligned));
    }

    // The horizontal phase's row and segment: a warp's 32 items take 8 rows, 4 segments
    // of each; rows RUNNING_SPAN / 2 words apart (odd) start in different banks.
    const uint own_row = item % RUNNING_ROWS;
    const int segment = (int)(item / RUNNING_ROWS) * RUNNING_SEGMENT;
    const int first = segment + left4 - left; // sums index of its first output's window

    for (int block = 0; block < (int)band_rows && y0 + block < h; block += RUNNING_ROWS) {
        // Vertical: the sums of RUNNING_ROWS rows, each slid down from the one above.
        // A simple loop: issuing all the block's loads before using them, unrolled,
        // gains less on a GPU than it loses on PoCL, and `sweep` is the variant built
        // for a GPU (docs/benchmarks.md, "Choices inside the kernels").
        for (int r = 0; r < RUNNING_ROWS; ++r) {
            if (block + r > 0) { // the band's first row has its window already
                const int y = y0 + block + r;
                const int entering = framecl_border_index(y - top + (int)box_height - 1, h, border);
                const int leaving = framecl_border_index(y - top - 1, h, border);
                column_a += running_lanes(running_load4(src, src_offset, src_stride, entering, xa, group_a,
                                                        border_value, src_aligned));
                column_a -= running_lanes(running_load4(src, src_offset, src_stride, leaving, xa, group_a,
                                                        border_value, src_aligned));
                if (has_halo) {
                    column_b += running_lanes(running_load4(src, src_offset, src_stride, entering, xb, group_b,
                                                            border_value, src_aligned));
                    column_b -= running_lanes(running_load4(src, src_offset, src_stride, leaving, xb, group_b,
                                                            border_value, src_aligned));
                }
            }
            // Lanes to ushorts in column order: (x, x + 1) and (x + 2, x + 3).
            __local uint* row = sum_words + r * (RUNNING_SPAN / 2);
            row[2 * item] = (column_a.x & 0xffffu) | (column_a.y << 16);
            row[2 * item + 1] = (column_a.x >> 16) | (column_a.y & 0xffff0000u);
            if (has_halo) {
                row[2 * (item + RUNNING_ITEMS)] = (column_b.x & 0xffffu) | (column_b.y << 16);
                row[2 * (item + RUNNING_ITEMS) + 1] = (column_b.x >> 16) | (column_b.y & 0xffff0000u);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Horizontal: RUNNING_SEGMENT means of row own_row, the window sliding along it.
        __local const ushort* row = sums + own_row * RUNNING_SPAN + first;
        __local uchar* out = means + own_row * RUNNING_OUT_SPAN + segment;
        uint sum = 0;
        for (int k = 0; k < (int)box_width; ++k)
            sum += row[k];
        out[0] = (uchar)running_mean(sum, count, reciprocal);
        for (int i = 1; i < RUNNING_SEGMENT; ++i) {
            sum += (uint)row[i + (int)box_width - 1] - (uint)row[i - 1];
            out[i] = (uchar)running_mean(sum, count, reciprocal);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Store: 4 bytes of each row per item, the rows' parts inside the image.
        const int x = x0 + 4 * (int)item;
        for (int r = 0; r < RUNNING_ROWS && y0 + block + r < h; ++r) {
            __global uchar* to = dst + dst_offset + (uint)(y0 + block + r) * dst_stride + (uint)x;
            __local const uchar* from = means + r * RUNNING_OUT_SPAN + 4 * item;
            if (x + 4 <= w && dst_aligned) {
                *(__global uint*)to = mean_words[r * (RUNNING_OUT_SPAN / 4) + item];
            } else {
                for (int k = 0; k < 4 && x + k < w; ++k)
                    to[k] = from[k];
            }
        }
    }
}


// sweep, R8: running sums as `running` keeps them, laid out for a GPU that waits on each
// load. A work group of SWEEP_ITEMS items keeps the vertical window sums of SWEEP_SUMS
// columns (4 per item, no halo items: the group's `tile_columns` outputs are fewer than
// its sums, by the box's width and an alignment, and neighbouring groups' sums overlap)
// and walks down a band of `band_rows` rows, SWEEP_ROWS at a time:
//   vertical    the rows entering and leaving the window for the block's 8 output rows
//               are loaded together, 16 loads with no branch between them (each a
//               4-byte word, coalesced across the group), and only then used: loads
//               behind a branch, or used as they come, left the GPU waiting on each.
//               They are issued a block ahead, before the previous block's horizontal
//               phase, so that they arrive while it runs. A row outside the image, or
//               a group of 4 columns partly inside it, is fixed up after the loads.
//               Each row's sums go to local memory with one 8-byte store per item.
//   border      an item whose 4 columns are all outside the image loads as one inside
//               does; after the vertical phase its sums are replaced by those of the
//               columns the border rule maps them to. Fixing up its loads instead, one
//               byte load per column and row, held its warp and the whole group, so
//               the groups at the image's sides cost much of the kernel's time
//               (docs/benchmarks.md, "How sweep is built, and why").
//   horizontal  the items share a block's rows, 16 per row, each sliding the window
//               along tile_columns / 16 outputs; the means divide by multiplying
//               (below) and leave for local memory in pairs.
//   store       each item stores 4 bytes of each row.
// It is much faster than `running` on the GPUs measured and much slower on a CPU through
// PoCL, so both stay and the tuner picks (docs/benchmarks.md, "How sweep is built, and
// why").
#define SWEEP_ITEMS 128                  // work-group size along X (plugins/box/box.cpp)
#define SWEEP_SUMS (4 * SWEEP_ITEMS)     // column sums per row: 4 per item
#define SWEEP_ROWS 8                     // output rows per pass through the three phases
#define SWEEP_SEGMENTS (SWEEP_ITEMS / SWEEP_ROWS) // items per row in the horizontal phase
// Sums per row, padded by 8 so that the horizontal phase's rows start in different
// local-memory banks: unpadded, their reads conflict (docs/benchmarks.md, "How sweep is
// built, and why").
#define SWEEP_SPAN (SWEEP_SUMS + 8)
#define SWEEP_OUT_SPAN (SWEEP_SUMS + 4)  // bytes per row of means
// Outputs per item in the horizontal phase, for the two tile widths the plugin asks
// (480 columns for a box at most 33 wide, 448 for wider: plugins/box/box.cpp).
#define SWEEP_WIDE_SEGMENT (480 / SWEEP_SEGMENTS)
#define SWEEP_NARROW_SEGMENT (448 / SWEEP_SEGMENTS)

// The words at column x of rows rows[0 .. SWEEP_ROWS - 1] (from framecl_border_index; a
// row of the constant border loads row 0 and is fixed by sweep_fix), all issued before
// any is used, with no branch between them.
void sweep_load_rows(__global const uchar* src, uint src_offset, uint src_stride, const int* rows, int x,
                     bool aligned, uint* pixels)
{
    if (aligned) {
#pragma unroll
        for (int r = 0; r < SWEEP_ROWS; ++r)
            pixels[r] = *(__global const uint*)(src + src_offset + (uint)max(rows[r], 0) * src_stride + (uint)x);
    } else {
#pragma unroll
        for (int r = 0; r < SWEEP_ROWS; ++r)
            pixels[r] = as_uint(vload4(0, src + src_offset + (uint)max(rows[r], 0) * src_stride + (uint)x));
    }
}

// A loaded word made right: the border value for a row outside the image (sy < 0), and
// for a group of 4 columns not wholly inside it, each pixel by the border rule.
uint sweep_fix(__global const uchar* src, uint src_offset, uint src_stride, int sy, uint pixels,
               ColumnGroup group, uint border_value)
{
    if (sy < 0)
        return border_value * 0x01010101u;
    return group.inside ? pixels : running_load4(src, src_offset, src_stride, sy, 0, group, border_value, false);
}

// (sum + count/2) / count by multiplying: with multiplier = floor(2^32 / count) + 1, the
// high word of n * multiplier is floor(n / count) whenever n * (multiplier * count - 2^32)
// < 2^32. The second factor is at most count, so here n * count <= (63 * 63 * 255 +
// 1984) * 3969 < 4.03e9 < 2^32: exact for every box. A 1x1 box (2^32 would not fit)
// takes multiplier 2^32 - 1 and adds 1 to its sum: the high word of (sum + 1) * (2^32 -
// 1) is sum. So `offset` is count / 2, or 1 for a 1x1 box, and no pixel branches.
// The horizontal phase starts its running sum at `offset` rather than adding it to each
// mean: one add fewer per output.
typedef struct {
    uint offset, multiplier;
} SweepDivisor;

SweepDivisor sweep_divisor(uint count)
{
    SweepDivisor divisor;
    divisor.offset = count == 1 ? 1u : count / 2;
    divisor.multiplier = count == 1 ? 0xffffffffu : (uint)(0x100000000ul / count + 1);
    return divisor;
}

// The mean of a window whose sum `offset_sum` already holds divisor.offset.
uint sweep_mean(uint offset_sum, SweepDivisor divisor)
{
    return mul_hi(offset_sum, divisor.multiplier);
}

// The horizontal phase of one row: `length` means (even) from the sums at `row`, the
// window sliding along, two means at a time to local memory (packed by a multiply-add,
// one instruction where a shift and an or take two: docs/benchmarks.md, "How sweep is
// built, and why"). `length` is a constant
// where this is inlined, so the loop unrolls and its reads take fixed offsets.
inline void sweep_horizontal(__local const ushort* row, __local ushort* out, const int length, uint box_width,
                             SweepDivisor divisor)
{
    __local const ushort* entering = row + box_width; // the sum entering the window of output i is entering[i - 1]
    uint sum = divisor.offset;
    for (int k = 0; k < (int)box_width; ++k)
        sum += row[k];
    uint previous = sweep_mean(sum, divisor);
#pragma unroll
    for (int i = 1; i < length; i += 2) {
        sum += (uint)entering[i - 1] - (uint)row[i - 1];
        out[i / 2] = (ushort)(previous + sweep_mean(sum, divisor) * 256u);
        if (i + 1 < length) {
            sum += (uint)entering[i] - (uint)row[i];
            previous = sweep_mean(sum, divisor);
        }
    }
}

// Row r of the block's column sums: lanes to ushorts in column order, (x, x + 1) and
// (x + 2, x + 3), one 8-byte store. Written with ushort2s, each word compiles to one byte
// permute, where masks and shifts take two instructions (docs/benchmarks.md, "How sweep
// is built, and why").
void sweep_store_sums(__local uint* sum_words, int r, uint item, uint2 column)
{
    const ushort2 even = as_ushort2(column.x), odd = as_ushort2(column.y);
    ((__local uint2*)(sum_words + r * (SWEEP_SPAN / 2)))[item] =
        (uint2)(as_uint((ushort2)(even.s0, odd.s0)), as_uint((ushort2)(even.s1, odd.s1)));
}

// The sums of the 4 columns of an item outside the image: each that of the column the
// border rule maps it to, or `border_sum` for the constant border. The mapped columns are
// inside the image, summed by the items there before the barrier that precedes this. For
// a column an output reads, the mapped one is among the group's sums (which start at
// column `first_column`): the rule maps a column k outside to one at most k inside, and
// the sums reach past the group's outputs by the box's reach on each side. The clamp keeps
// the columns no output reads inside the array.
void sweep_border_sums(__local uint* sum_words, uint item, int4 columns, int first_column, uint border_sum)
{
    __local ushort* sums = (__local ushort*)sum_words;
    const int4 from = clamp(columns - first_column, 0, SWEEP_SUMS - 1);
#pragma unroll
    for (int r = 0; r < SWEEP_ROWS; ++r) {
        __local ushort* row = sums + r * SWEEP_SPAN;
        const ushort4 mapped = (ushort4)(row[from.s0], row[from.s1], row[from.s2], row[from.s3]);
        vstore4(select(mapped, (ushort4)border_sum, convert_short4(columns < 0)), item, row);
    }
}

// The words at column load_x of the rows entering and leaving the window for a block whose
// first rows are first_entering and first_leaving: every row inside the image loads
// with no row index, and a block at the image's top or bottom edge through
// framecl_border_index, fixed up by sweep_fix where it is used.
void sweep_load_block(__global const uchar* src, uint src_offset, uint src_stride, int first_entering,
                      int first_leaving, int h, uint border, bool plain_group, bool words, int load_x,
                      bool src_aligned, uint* entering, uint* leaving)
{
    if (plain_group && first_leaving >= 0 && first_entering + SWEEP_ROWS <= h) {
        __global const uchar* entering_row = src + src_offset + (uint)first_entering * src_stride + (uint)load_x;
        __global const uchar* leaving_row = src + src_offset + (uint)first_leaving * src_stride + (uint)load_x;
#pragma unroll
        for (int r = 0; r < SWEEP_ROWS; ++r) {
            entering[r] = *(__global const uint*)(entering_row + (uint)r * src_stride);
            leaving[r] = *(__global const uint*)(leaving_row + (uint)r * src_stride);
        }
    } else if (words) {
        int entering_rows[SWEEP_ROWS], leaving_rows[SWEEP_ROWS];
#pragma unroll
        for (int r = 0; r < SWEEP_ROWS; ++r) {
            entering_rows[r] = framecl_border_index(first_entering + r, h, border);
            leaving_rows[r] = framecl_border_index(first_leaving + r, h, border);
        }
        sweep_load_rows(src, src_offset, src_stride, entering_rows, load_x, src_aligned, entering);
        sweep_load_rows(src, src_offset, src_stride, leaving_rows, load_x, src_aligned, leaving);
    }
}

__kernel __attribute__((reqd_work_group_size(SWEEP_ITEMS, 1, 1)))
void box_sweep_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                  __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                  uint width, uint height, uint box_width, uint box_height,
                  uint border, uint border_value, uint band_rows, uint tile_columns)
{
    // Declared as words (the sums 8-byte aligned for their uint2 stores); read as
    // ushorts and written as pairs of bytes below.
    __local uint sum_words[SWEEP_ROWS * SWEEP_SPAN / 2] __attribute__((aligned(8)));
    __local uint mean_words[SWEEP_ROWS * SWEEP_OUT_SPAN / 4];
    __local const ushort* sums = (__local const ushort*)sum_words;
    __local ushort* mean_pairs = (__local ushort*)mean_words;

    const uint item = get_local_id(0);
    // The group's first output column and row; get_global_id carries the offset of a
    // tile, which the daemon cuts at work-group boundaries.
    const int x0 = (int)((get_global_id(0) - item) / SWEEP_ITEMS * tile_columns);
    const int y0 = (int)(get_global_id(1) * band_rows);
    if (y0 >= (int)height) // the whole group: no barrier is left waiting
        return;
    const int w = (int)width, h = (int)height;
    const int left = (int)(box_width / 2), top = (int)(box_height / 2);
    // Sums kept from column x0 - left4, the window's left edge for x0 rounded down to a
    // multiple of 4 (x0 is one), so that each item's 4 columns are a word of the row.
    const int left4 = (left + 3) & ~3;
    const int x = x0 - left4 + 4 * (int)item;
    const ColumnGroup group = running_group(x, w, border);
    // An item whose 4 columns are all outside the image loads column 0 as though it were
    // inside, and takes its sums from the columns the border rule maps them to after the
    // vertical phase (sweep_border_sums). One partly inside loads column 0 (inside the
    // plane when the image is at least 4 wide) and is fixed up; an image narrower than
    // that never loads a word.
    const bool outside = x + 4 <= 0 || x >= w;
    const bool any_outside = x0 - left4 < 0 || x0 - left4 + SWEEP_SUMS > w; // of the group's items
    ColumnGroup load_group = group;
    load_group.inside = group.inside || outside;
    const int load_x = group.inside ? x : 0;
    const bool words = w >= 4;
    const bool src_aligned = ((src_offset | src_stride) & 3u) == 0;
    const bool dst_aligned = ((dst_offset | dst_stride) & 3u) == 0;
    // Loads with nothing to fix: a word inside the image, read as a word.
    const bool plain_group = load_group.inside && src_aligned;
    const SweepDivisor divisor = sweep_divisor(box_width * box_height);

    // The vertical window of the row above y0 (rows y0 - top - 1 .. y0 - top + box_height
    // - 2), so that every output row then adds the row entering and drops the one leaving:
    // 16 rows loaded at a time, so that a group waits for the loads of a 15x15 window once
    // and of a 31x31 one twice rather than once per 8 rows (docs/benchmarks.md, "Box
    // sweep: scripts/device-sweep").
    uint2 column = 0;
    for (int j = 0; j < (int)box_height; j += 2 * SWEEP_ROWS) {
        int rows[2 * SWEEP_ROWS];
        uint pixels[2 * SWEEP_ROWS];
#pragma unroll
        for (int r = 0; r < 2 * SWEEP_ROWS; ++r)
            rows[r] = framecl_border_index(y0 - top - 1 + j + r, h, border);
        if (words) {
            sweep_load_rows(src, src_offset, src_stride, rows, load_x, src_aligned, pixels);
            sweep_load_rows(src, src_offset, src_stride, rows + SWEEP_ROWS, load_x, src_aligned, pixels + SWEEP_ROWS);
        }
#pragma unroll
        for (int r = 0; r < 2 * SWEEP_ROWS; ++r) {
            if (j + r < (int)box_height)
                column += running_lanes(sweep_fix(src, src_offset, src_stride, rows[r], pixels[r], load_group,
                                                  border_value));
        }
    }

    // The horizontal phase's row and segment.
    const uint own_row = item % SWEEP_ROWS;
    const int segment_length = (int)tile_columns / SWEEP_SEGMENTS; // even (plugins/box/box.cpp)
    const int segment = (int)(item / SWEEP_ROWS) * segment_length;
    const int first = segment + left4 - left; // sums index of its first output's window
    // This item's stores: 4 bytes of each row, a word where the row's part is whole.
    const int out_x = x0 + 4 * (int)item;
    const bool stores = (int)item < (int)tile_columns / 4;
    const bool word_stores = out_x + 4 <= w && dst_aligned;

    uint entering[SWEEP_ROWS], leaving[SWEEP_ROWS];
    sweep_load_block(src, src_offset, src_stride, y0 - top + (int)box_height - 1, y0 - top - 1, h, border,
                     plain_group, words, load_x, src_aligned, entering, leaving);
    for (int block = 0; block < (int)band_rows && y0 + block < h; block += SWEEP_ROWS) {
        // Vertical: the block's loads, issued a block before.
        const int first_entering = y0 + block - top + (int)box_height - 1, first_leaving = y0 + block - top - 1;
        if (plain_group && first_leaving >= 0 && first_entering + SWEEP_ROWS <= h) {
#pragma unroll
            for (int r = 0; r < SWEEP_ROWS; ++r) {
                column += running_lanes(entering[r]);
                column -= running_lanes(leaving[r]);
                sweep_store_sums(sum_words, r, item, column);
            }
        } else {
#pragma unroll
            for (int r = 0; r < SWEEP_ROWS; ++r) {
                column += running_lanes(sweep_fix(src, src_offset, src_stride,
                                                  framecl_border_index(first_entering + r, h, border), entering[r],
                                                  load_group, border_value));
                column -= running_lanes(sweep_fix(src, src_offset, src_stride,
                                                  framecl_border_index(first_leaving + r, h, border), leaving[r],
                                                  load_group, border_value));
                sweep_store_sums(sum_words, r, item, column);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // Items outside the image take their sums from the columns inside (above): every
        // other item's sums written, and read by none until the barrier after.
        if (any_outside) {
            if (outside)
                sweep_border_sums(sum_words, item, group.columns, x0 - left4, box_height * border_value);
            barrier(CLK_LOCAL_MEM_FENCE);
        }

        // The next block's loads, in flight during this block's horizontal phase.
        if (block + SWEEP_ROWS < (int)band_rows && y0 + block + SWEEP_ROWS < h)
            sweep_load_block(src, src_offset, src_stride, first_entering + SWEEP_ROWS, first_leaving + SWEEP_ROWS, h,
                             border, plain_group, words, load_x, src_aligned, entering, leaving);

        // Horizontal: segment_length means of row own_row, two at a time. The two tile
        // widths (plugins/box/box.cpp) are spelled out so that the loop unrolls.
        __local const ushort* row = sums + own_row * SWEEP_SPAN + first;
        __local ushort* out = mean_pairs + (own_row * SWEEP_OUT_SPAN + segment) / 2;
        if (segment_length == SWEEP_WIDE_SEGMENT)
            sweep_horizontal(row, out, SWEEP_WIDE_SEGMENT, box_width, divisor);
        else
            sweep_horizontal(row, out, SWEEP_NARROW_SEGMENT, box_width, divisor);
        barrier(CLK_LOCAL_MEM_FENCE);

        // Store: 4 bytes of each row per item, the rows' parts inside the image. No
        // barrier follows: the next block writes the sums, all read before the barrier
        // above, and the means only after its own first barrier.
        if (stores) {
            __global uchar* to = dst + dst_offset + (uint)(y0 + block) * dst_stride + (uint)out_x;
            if (word_stores && y0 + block + SWEEP_ROWS <= h) {
#pragma unroll
                for (int r = 0; r < SWEEP_ROWS; ++r)
                    *(__global uint*)(to + (uint)r * dst_stride) = mean_words[r * (SWEEP_OUT_SPAN / 4) + item];
            } else {
                for (int r = 0; r < SWEEP_ROWS && y0 + block + r < h; ++r, to += dst_stride) {
                    const uint means = mean_words[r * (SWEEP_OUT_SPAN / 4) + item];
                    if (word_stores) {
                        *(__global uint*)to = means;
                    } else {
                        for (int k = 0; k < 4 && out_x + k < w; ++k)
                            to[k] = (uchar)(means >> (8 * k));
                    }
                }
            }
        }
    }
}

#ifdef __IMAGE_SUPPORT__
// image: separable, with the input read as an image (guide §6.2) and, on R8, the
// horizontal sums kept in an R16 image (CL_R of CL_UNSIGNED_INT16) that the second pass
// reads the same way. On ABGR8888 the sums go to the separable variant's R16 buffer
// (an image four times the frame's width would pass the texture path's width limit on
// large frames) and box_columns_abgr finishes. Per output pixel the reads are those of
// separable, served by the texture cache.
__kernel void box_rows_image_r8(__read_only image2d_t src, __write_only image2d_t sums, uint width, uint height,
                                uint box_width, uint border, uint border_value)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = x - (int)(box_width / 2);
    uint sum = 0;
    for (int i = 0; i < (int)box_width; ++i)
        sum += framecl_read_pixel(src, left + i, y, width, height, border, border_value);
    write_imageui(sums, (int2)(x, y), (uint4)(sum, 0, 0, 1));
}

__kernel void box_columns_image_r8(__read_only image2d_t sums, __global uchar* restrict dst, uint dst_offset,
                                   uint dst_stride, uint width, uint height, uint box_width, uint box_height,
                                   uint border, uint border_value)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int top = y - (int)(box_height / 2);
    uint sum = 0;
    for (int j = 0; j < (int)box_height; ++j)
        sum += framecl_read_pixel(sums, x, top + j, width, height, border, box_width * border_value);
    const uint count = box_width * box_height;
    dst[dst_offset + y * dst_stride + x] = (uchar)((sum + count / 2) / count);
}

__kernel void box_rows_image_abgr(__read_only image2d_t src, __global uchar* restrict sums, uint sums_offset,
                                  uint sums_stride, uint width, uint height, uint box_width, uint border,
                                  uint border_value)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = x - (int)(box_width / 2);
    uint4 sum = 0;
    for (int i = 0; i < (int)box_width; ++i)
        sum += framecl_read_pixel4(src, left + i, y, width, height, border, border_value);
    vstore4(convert_ushort4(sum), x, (__global ushort*)(sums + sums_offset + y * sums_stride));
}
#endif
