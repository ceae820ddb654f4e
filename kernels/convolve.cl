// The convolution filter of an R8 plane (OpenCV's filter2D and sepFilter2D), as
// docs/filters.md specifies it: output pixel (x, y) is
//     saturate(round(scale * sum + delta)),
//     sum = Σ_j Σ_i w[j][i] p(x - kernel_width/2 + i, y - kernel_height/2 + j)
// a correlation (the kernel is not flipped), rounded to nearest with ties to even
// (convert_uchar_sat_rte, as OpenCV's saturate_cast) and saturated to 0..255. Pixels
// outside the image follow `border`. The plugin folds `scale` into the weights it
// passes (into kernel_y's for the separable passes; computed in double, rounded once to
// float), so the kernels add delta only.
//
// Every sum is computed in float, so a result may differ from the double-precision
// reference by 1 where the exact value lies near a rounding boundary (tests allow ±1);
// weights whose products and partial sums are exact in float (small integers, scales
// that are powers of two) give exactly the reference.
//
// The weights arrive in a plan constant (FRAMECL_ARG_CONSTANT), read through
// __constant: up to 81 floats, too many for the 24 scalar arguments of a dispatch,
// and the same for every work item, which __constant memory serves from its cache.
//
// The variants (plugins/convolve/convolve.cpp chooses); per output pixel:
//   convolve_direct   one output per work item, the whole window (the guide's baseline,
//                     §10.2.1): reads kernel_width x kernel_height bytes, writes 1
//   convolve_rows, convolve_columns
//                     separable (guide §9.3.1): a horizontal pass of kernel_x into a
//                     float intermediate, then a vertical pass of kernel_y. rows reads
//                     kernel_width bytes and writes 4; columns reads 4 x kernel_height
//                     bytes and writes 1
//   convolve_rows8, convolve_columns8
//                     separable8: the separable passes, 8 outputs of a row per work
//                     item with vector loads and stores, as row8 (guide §10.3.3,
//                     §10.2.2). rows8 reads 2 bytes and writes 4; columns8 reads
//                     4 x kernel_height bytes (a vload8 per window row) and writes 1
//   convolve_row8     8 outputs of a row per work item (guide §10.3.3): each window
//                     row's 8 + kernel_width - 1 <= 16 pixels loaded once by one
//                     vload16 and the window slid over them in registers: reads
//                     16 x kernel_height / 8 = 2 x kernel_height bytes, writes 1 (a
//                     vstore8 per work item)
//   convolve_block_w<W>
//                     block: 8 x 4 outputs per work item, one kernel per kernel width
//                     (taps unrolled, pixels and sums in registers), each input row
//                     loaded once for the block's 4 rows: reads 2 (4 + kernel_height - 1)
//                     / 4 bytes, writes 1
//   convolve_sepblock_w<W>
//                     sepblock: separable in one pass, 8 x 8 outputs per work item, the
//                     horizontal sums of the block's input rows in registers instead of
//                     an intermediate: reads 2 (8 + kernel_height - 1) / 8 bytes, writes 1
//   convolve_image    image: direct with the window read from an image (guide §6.2),
//                     at the end of this file

// Border rules: framecl_border_index and FRAMECL_BORDER_* (kernels/prelude.cl, which the
// daemon builds in front of this file).

// direct: one work item per pixel, weights[j * kernel_width + i] the scaled weight of
// window row j, column i.
// Reads kernel_width * kernel_height bytes and writes 1 byte per output pixel.
__kernel void convolve_direct(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                              uint width, uint height, __constant float* weights,
                              uint kernel_width, uint kernel_height, uint border, uint border_value,
                              float delta)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = (int)x - (int)(kernel_width / 2);
    const int top = (int)y - (int)(kernel_height / 2);
    const float outside = (float)border_value;
    float sum = 0.0f;
    for (int j = 0; j < (int)kernel_height; ++j) {
        __constant float* w = weights + j * kernel_width;
        const int sy = framecl_border_index(top + j, height, border);
        if (sy < 0) {
            for (int i = 0; i < (int)kernel_width; ++i)
                sum = mad(w[i], outside, sum);
            continue;
        }
        __global const uchar* row = src + src_offset + (uint)sy * src_stride;
        for (int i = 0; i < (int)kernel_width; ++i) {
            const int sx = framecl_border_index(left + i, width, border);
            sum = mad(w[i], sx < 0 ? outside : (float)row[sx], sum);
        }
    }
    dst[dst_offset + y * dst_stride + x] = convert_uchar_sat_rte(sum + delta);
}

// separable, first pass: each pixel's horizontal correlation with kernel_x (unscaled),
// as a float, into an intermediate of the image's size, 4 bytes per pixel.
// Reads kernel_width bytes and writes 4 bytes per output pixel.
__kernel void convolve_rows(__global const uchar* restrict src, uint src_offset, uint src_stride,
                            __global uchar* restrict sums, uint sums_offset, uint sums_stride,
                            uint width, uint height, __constant float* weights, uint kernel_width,
                            uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = (int)x - (int)(kernel_width / 2);
    __global const uchar* row = src + src_offset + y * src_stride;
    const float outside = (float)border_value;
    float sum = 0.0f;
    for (int i = 0; i < (int)kernel_width; ++i) {
        const int sx = framecl_border_index(left + i, width, border);
        sum = mad(weights[i], sx < 0 ? outside : (float)row[sx], sum);
    }
    ((__global float*)(sums + sums_offset + y * sums_stride))[x] = sum;
}

// separable, second pass: the vertical correlation of the horizontal sums with
// kernel_y (scale folded in), delta, rounding. A row outside the image under a constant
// border is all border_value, so its horizontal sum is border_row = border_value x
// Σ kernel_x (the plugin computes it).
// Reads 4 * kernel_height bytes and writes 1 byte per output pixel.
__kernel void convolve_columns(__global const uchar* restrict sums, uint sums_offset, uint sums_stride,
                               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                               uint width, uint height, __constant float* weights, uint kernel_height,
                               uint border, float border_row, float delta)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int top = (int)y - (int)(kernel_height / 2);
    float sum = 0.0f;
    for (int j = 0; j < (int)kernel_height; ++j) {
        const int sy = framecl_border_index(top + j, height, border);
        const float horizontal =
            sy < 0 ? border_row : ((__global const float*)(sums + sums_offset + (uint)sy * sums_stride))[x];
        sum = mad(weights[j], horizontal, sum);
    }
    dst[dst_offset + y * dst_stride + x] = convert_uchar_sat_rte(sum + delta);
}

// The 16 pixels of `row` from column `left`, each mapped through the border rule: the
// row8 work items whose window leaves the image on the left or right.
float16 border_pixels16(__global const uchar* row, int left, int width, uint border, float outside)
{
    float p[16];
    for (int i = 0; i < 16; ++i) {
        const int sx = framecl_border_index(left + i, width, border);
        p[i] = sx < 0 ? outside : (float)row[sx];
    }
    return vload16(0, p);
}

// Outputs x0 .. x0 + 7 of an R8 row, those at width and beyond left unwritten: one
// vstore8 unless the row ends inside them.
void store8(uchar8 out, __global uchar* row, uint x0, uint width)
{
    if (x0 + 8 <= width) {
        vstore8(out, 0, row + x0);
        return;
    }
    uchar last[8];
    vstore8(out, 0, last);
    for (uint i = 0; x0 + i < width; ++i)
        row[x0 + i] = last[i];
}

// Tap i of a window row for the 8 outputs: weight w[i] times pixels i .. i + 7 of the
// row's 16. kernel_width is the same for every work item, so the test never diverges.
#define ROW8_TAP(i, pixels)                                                                      \
    if ((int)kernel_width > i)                                                                   \
        sum = mad((float8)(w[i]), p.pixels, sum);

// Every tap of a window row: sum += w[i] * p[i .. i + 7] for i < kernel_width, the
// window sliding over the row's 16 pixels in registers.
#define ROW8_TAPS                                                                                \
    ROW8_TAP(0, s01234567)                                                                       \
    ROW8_TAP(1, s12345678)                                                                       \
    ROW8_TAP(2, s23456789)                                                                       \
    ROW8_TAP(3, s3456789a)                                                                       \
    ROW8_TAP(4, s456789ab)                                                                       \
    ROW8_TAP(5, s56789abc)                                                                       \
    ROW8_TAP(6, s6789abcd)                                                                       \
    ROW8_TAP(7, s789abcde)                                                                       \
    ROW8_TAP(8, s89abcdef)

// row8: outputs x0 .. x0 + 7 of row y per work item (guide §10.3.3, "filtering more
// pixels per work item"; §10.2.2, vectorised loads and stores). Each window row's
// pixels x0 - kernel_width/2 .. x0 - kernel_width/2 + 15 are loaded once (vload16,
// converted to float16: guide §10.3.2 packs pixels, here 8-bit ones) and every tap
// multiplies 8 of them at once. Work items whose 16 pixels leave the image on the left
// or right map each pixel through the border rule instead; a window row above or below
// the image is mapped once, or is all border_value under constant. The last work item
// of a row whose width is not a multiple of 8 stores only its pixels inside the image.
// Reads 2 * kernel_height bytes (16 per window row for 8 outputs) and writes 1 byte
// per output pixel.
__kernel void convolve_row8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                            __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                            uint width, uint height, __constant float* weights,
                            uint kernel_width, uint kernel_height, uint border, uint border_value,
                            float delta)
{
    const uint x0 = 8 * get_global_id(0);
    const uint y = get_global_id(1);
    if (x0 >= width || y >= height)
        return;
    const int left = (int)x0 - (int)(kernel_width / 2);
    const int top = (int)y - (int)(kernel_height / 2);
    const bool inside = left >= 0 && left + 16 <= (int)width;
    const float outside = (float)border_value;
    float8 sum = 0.0f;
    for (int j = 0; j < (int)kernel_height; ++j) {
        __constant float* w = weights + j * kernel_width;
        const int sy = framecl_border_index(top + j, height, border);
        float16 p;
        if (sy < 0) {
            p = (float16)(outside);
        } else {
            __global const uchar* row = src + src_offset + (uint)sy * src_stride;
            p = inside ? convert_float16(vload16(0, row + left)) : border_pixels16(row, left, width, border, outside);
        }
        ROW8_TAPS
    }
    store8(convert_uchar8_sat_rte(sum + delta), dst + dst_offset + y * dst_stride, x0, width);
}

// separable8, first pass: convolve_rows for outputs x0 .. x0 + 7 of row y per work item,
// the row's 16 pixels loaded once as in row8 (guide §10.3.3) and the 8 sums stored at
// once (vstore8, guide §10.2.2).
// Reads 2 bytes (16 per 8 outputs) and writes 4 bytes per output pixel.
__kernel void convolve_rows8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                             __global uchar* restrict sums, uint sums_offset, uint sums_stride,
                             uint width, uint height, __constant float* weights, uint kernel_width,
                             uint border, uint border_value)
{
    const uint x0 = 8 * get_global_id(0);
    const uint y = get_global_id(1);
    if (x0 >= width || y >= height)
        return;
    const int left = (int)x0 - (int)(kernel_width / 2);
    __global const uchar* row = src + src_offset + y * src_stride;
    const float16 p = left >= 0 && left + 16 <= (int)width
                          ? convert_float16(vload16(0, row + left))
                          : border_pixels16(row, left, width, border, (float)border_value);
    __constant float* w = weights;
    float8 sum = 0.0f;
    ROW8_TAPS
    __global float* out_row = (__global float*)(sums + sums_offset + y * sums_stride);
    if (x0 + 8 <= width) {
        vstore8(sum, 0, out_row + x0);
        return;
    }
    float last[8];
    vstore8(sum, 0, last);
    for (uint i = 0; x0 + i < width; ++i)
        out_row[x0 + i] = last[i];
}

// separable8, second pass: convolve_columns for outputs x0 .. x0 + 7 of row y per work
// item, each window row's 8 horizontal sums loaded at once (vload8 of 32 bytes, guide
// §10.2.2); the last work item of a row whose width is not a multiple of 8 loads and
// stores only its pixels inside the image.
// Reads 4 * kernel_height bytes and writes 1 byte per output pixel.
__kernel void convolve_columns8(__global const uchar* restrict sums, uint sums_offset, uint sums_stride,
                                __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                                uint width, uint height, __constant float* weights, uint kernel_height,
                                uint border, float border_row, float delta)
{
    const uint x0 = 8 * get_global_id(0);
    const uint y = get_global_id(1);
    if (x0 >= width || y >= height)
        return;
    const int top = (int)y - (int)(kernel_height / 2);
    const bool whole = x0 + 8 <= width;
    float8 sum = 0.0f;
    for (int j = 0; j < (int)kernel_height; ++j) {
        const int sy = framecl_border_index(top + j, height, border);
        float8 horizontal = (float8)(border_row);
        if (sy >= 0) {
            __global const float* row = (__global const float*)(sums + sums_offset + (uint)sy * sums_stride);
            if (whole) {
                horizontal = vload8(0, row + x0);
            } else {
                float part[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
                for (uint i = 0; x0 + i < width; ++i)
                    part[i] = row[x0 + i];
                horizontal = vload8(0, part);
            }
        }
        sum = mad((float8)(weights[j]), horizontal, sum);
    }
    store8(convert_uchar8_sat_rte(sum + delta), dst + dst_offset + y * dst_stride, x0, width);
}

// ---- block and sepblock: the kernel's width compiled in ----
//
// row8 and separable8 loop over window rows and taps up to the run-time kernel_width and
// kernel_height, so a GPU compiler can neither unroll the taps nor give the window's
// pixels fixed registers, and separable8 sends every horizontal sum through global
// memory (4 bytes written and 4 read per pixel: more than the R8 input and output
// together). The kernels below are compiled once per kernel width W, 1 to 9 (the plugin
// takes every width, even ones too), by CONVOLVE_WIDTH_KERNELS: the taps and the outputs
// of a work item are unrolled, so its pixels and sums are private arrays indexed only by
// constants and stay in registers, and every weight is read from __constant, the same for
// all work items. The window's height stays a run-time loop bound: the loop over input
// rows indexes no array, so it needs no unrolling, and compiling a kernel per height too
// (81 sizes of fully unrolled code) made the program take minutes to build on PoCL.
//
// A work item computes a block of 8 outputs of a row by BLOCK_ROWS (block) or
// SEPBLOCK_ROWS (sepblock) rows, and loads each input row its block needs once, 16 bytes
// (pixels x0 - 4 .. x0 + 11: every window of outputs x0 .. x0 + 7 up to 9 wide), which the
// rows of the block share: block reads (BLOCK_ROWS + H - 1) / BLOCK_ROWS x 2 bytes per
// output pixel, 4 for 5x5, against row8's 2 H = 10. The input rows are taken top to bottom
// and each adds its taps to every output row whose window holds it, so an output still
// sums its window rows in order, and each row's taps left to right, from 0: the order of
// direct and row8 (and, for sepblock, of convolve_rows and convolve_columns), so the
// results are theirs.

// The outputs per work item in a column. block's 4 rows share each input row between 4
// outputs (32 sums in registers); sepblock's 8, whose horizontal sums cost W taps each
// and vertical ones H, make the horizontal pass W (8 + H - 1) / 8 multiply-adds per
// output, 2 W for 9 + 9, with 64 sums, the row's 16 pixels and its 8 horizontal sums in
// registers. plugins/convolve/convolve.cpp sizes its dispatches by the same numbers.
#define BLOCK_ROWS 4
#define SEPBLOCK_ROWS 8

// The float 2^23 and its bits: 2^23 + p has the byte p in its low mantissa bits.
#define EXPONENT_2_23 0x4B000000u
#define FLOAT_2_23 8388608.0f

// Pixels x0 - 4 .. x0 + 11 of image row sy (an index from framecl_border_index, not -1)
// into p[0 .. 15] as floats. Work items away from the left and right edges load the 16
// bytes as four words (word loads where the offset and the stride are multiples of 4, so
// that x0 - 4 starts a word in every row; else one vload16) and turn each byte into a
// float by its bits, 2^23 + p less 2^23: an integer operation and a subtraction, where a
// conversion instruction runs at a fraction of the float rate on GPUs (a quarter on
// NVIDIA). The others map each pixel through the border rule. Pixels a kernel narrower
// than 9 never reads are never computed: every index is a constant.
static inline __attribute__((always_inline)) void unpack_span16(uint4 words, float* p)
{
    const uint word[4] = {words.s0, words.s1, words.s2, words.s3};
#pragma unroll
    for (int k = 0; k < 16; ++k)
        p[k] = as_float(((word[k / 4] >> (8 * (k % 4))) & 0xffu) | EXPONENT_2_23) - FLOAT_2_23;
}

static inline __attribute__((always_inline))
void load_span16(__global const uchar* restrict src, uint src_offset, uint src_stride, int sy, int x0,
                 int width, uint border, uint border_value, bool aligned, float* p)
{
    const int left = x0 - 4;
    __global const uchar* row = src + src_offset + (uint)sy * src_stride;
    if (left >= 0 && left + 16 <= width) {
        unpack_span16(aligned ? vload4(0, (__global const uint*)(row + left)) : as_uint4(vload16(0, row + left)),
                      p);
        return;
    }
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        const int sx = framecl_border_index(left + k, width, border);
        p[k] = sx < 0 ? (float)border_value : (float)row[sx];
    }
}

// Row y of a block, outputs x0 .. x0 + 7 from their sums, delta added: those inside the
// image, with one 8-byte store where the offset and the stride are multiples of 8.
static inline __attribute__((always_inline))
void store_block_row(const float* sum, float delta, __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                     int y, int x0, int width, bool aligned)
{
    const uchar8 out = convert_uchar8_sat_rte(vload8(0, sum) + delta);
    __global uchar* row = dst + dst_offset + (uint)y * dst_stride;
    if (aligned && x0 + 8 <= width)
        *(__global uint2*)(row + x0) = as_uint2(out);
    else
        store8(out, row, x0, width);
}

// block: outputs x0 .. x0 + 7 of rows y0 .. y0 + BLOCK_ROWS - 1 per work item, a W x
// kernel_height kernel (weights[j * W + i], scaled; a pair as its outer product). Input
// rows y0 - kernel_height/2 onwards, BLOCK_ROWS + kernel_height - 1 of them, each loaded
// once (a row of the constant border is all border_value); row k adds window row
// j = k - r of output row r. Rows of the block below the image are computed from rows the
// border gives, and not stored.
// Reads 2 (BLOCK_ROWS + H - 1) / BLOCK_ROWS bytes and writes 1 per output pixel.
static inline __attribute__((always_inline))
void block_body(__global const uchar* restrict src, uint src_offset, uint src_stride,
                __global uchar* restrict dst, uint dst_offset, uint dst_stride, uint width, uint height,
                __constant float* weights, uint kernel_height, uint border, uint border_value, float delta,
                const int W)
{
    const int x0 = 8 * get_global_id(0);
    const int y0 = BLOCK_ROWS * get_global_id(1);
    const int w = width, h = height, H = kernel_height;
    if (x0 >= w || y0 >= h)
        return;
    // Uniform over the dispatch: every work item takes the same load and store path.
    const bool src_aligned = ((src_offset | src_stride) & 3u) == 0;
    const bool dst_aligned = ((dst_offset | dst_stride) & 7u) == 0;
    const int first = 4 - W / 2; // p[first + i + o]: tap i of output x0 + o
    float sum[BLOCK_ROWS][8];
#pragma unroll
    for (int r = 0; r < BLOCK_ROWS; ++r)
#pragma unroll
        for (int o = 0; o < 8; ++o)
            sum[r][o] = 0.0f;
    for (int k = 0; k < BLOCK_ROWS + H - 1; ++k) {
        const int sy = framecl_border_index(y0 - H / 2 + k, h, border);
        float p[16];
        if (sy < 0) {
#pragma unroll
            for (int q = 0; q < 16; ++q)
                p[q] = (float)border_value;
        } else {
            load_span16(src, src_offset, src_stride, sy, x0, w, border, border_value, src_aligned, p);
        }
#pragma unroll
        for (int r = 0; r < BLOCK_ROWS; ++r) {
            const int j = k - r; // the same for every work item: the branch never diverges
            if (j < 0 || j >= H)
                continue;
            __constant float* row_weights = weights + j * W;
#pragma unroll
            for (int i = 0; i < W; ++i) {
                const float weight = row_weights[i];
#pragma unroll
                for (int o = 0; o < 8; ++o)
                    sum[r][o] = mad(weight, p[first + i + o], sum[r][o]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < BLOCK_ROWS; ++r)
        if (y0 + r < h)
            store_block_row(sum[r], delta, dst, dst_offset, dst_stride, y0 + r, x0, w, dst_aligned);
}

// sepblock: separable in one pass, outputs x0 .. x0 + 7 of rows y0 .. y0 + SEPBLOCK_ROWS - 1
// per work item. Each of its SEPBLOCK_ROWS + kernel_height - 1 input rows is loaded once
// and its 8 horizontal sums with kernel_x (unscaled) computed in registers, as
// convolve_rows8 computes them (border_row for a row of the constant border, as
// convolve_columns8 takes it), then added with kernel_y (scale folded in) to every output
// row whose window holds it: the same sums in the same order as separable8, without the
// intermediate. The horizontal sums of the kernel_height - 1 rows a block shares with the
// next are computed by both (W (H - 1) / 8 multiply-adds per output beyond separable's
// W + H) rather than shared through __local memory, which would cost a barrier per row
// and local loads and stores on top of them. Where a work item's span lies inside the
// rows and its words are aligned, row k + 1's words are loaded before row k's sums are
// computed, so that the load's latency overlaps them: the loads, each waited for at once,
// took most of the kernel's time (docs/benchmarks.md, "convolve's blocks: NVIDIA H200").
// Reads 2 (SEPBLOCK_ROWS + H - 1) / SEPBLOCK_ROWS bytes and writes 1 per output pixel.
static inline __attribute__((always_inline))
void sepblock_body(__global const uchar* restrict src, uint src_offset, uint src_stride,
                   __global uchar* restrict dst, uint dst_offset, uint dst_stride, uint width, uint height,
                   __constant float* kernel_x, __constant float* kernel_y, uint kernel_height, uint border,
                   uint border_value, float border_row, float delta, const int W)
{
    const int x0 = 8 * get_global_id(0);
    const int y0 = SEPBLOCK_ROWS * get_global_id(1);
    const int w = width, h = height, H = kernel_height;
    if (x0 >= w || y0 >= h)
        return;
    const bool src_aligned = ((src_offset | src_stride) & 3u) == 0;
    const bool dst_aligned = ((dst_offset | dst_stride) & 7u) == 0;
    const int first = 4 - W / 2;
    float sum[SEPBLOCK_ROWS][8];
#pragma unroll
    for (int r = 0; r < SEPBLOCK_ROWS; ++r)
#pragma unroll
        for (int o = 0; o < 8; ++o)
            sum[r][o] = 0.0f;
    const bool ahead = src_aligned && x0 - 4 >= 0 && x0 + 12 <= w;
    const int rows = SEPBLOCK_ROWS + H - 1;
    uint4 next = 0;
    const int sy_first = framecl_border_index(y0 - H / 2, h, border);
    if (ahead && sy_first >= 0)
        next = vload4(0, (__global const uint*)(src + src_offset + (uint)sy_first * src_stride + (x0 - 4)));
    for (int k = 0; k < rows; ++k) {
        const int sy = framecl_border_index(y0 - H / 2 + k, h, border);
        const uint4 words = next;
        if (ahead && k + 1 < rows) {
            const int sy_next = framecl_border_index(y0 - H / 2 + k + 1, h, border);
            if (sy_next >= 0)
                next = vload4(0, (__global const uint*)(src + src_offset + (uint)sy_next * src_stride + (x0 - 4)));
        }
        float horizontal[8];
        if (sy < 0) {
#pragma unroll
            for (int o = 0; o < 8; ++o)
                horizontal[o] = border_row;
        } else {
            float p[16];
            if (ahead)
                unpack_span16(words, p);
            else
                load_span16(src, src_offset, src_stride, sy, x0, w, border, border_value, src_aligned, p);
#pragma unroll
            for (int o = 0; o < 8; ++o)
                horizontal[o] = 0.0f;
#pragma unroll
            for (int i = 0; i < W; ++i) {
                const float weight = kernel_x[i];
#pragma unroll
                for (int o = 0; o < 8; ++o)
                    horizontal[o] = mad(weight, p[first + i + o], horizontal[o]);
            }
        }
#pragma unroll
        for (int r = 0; r < SEPBLOCK_ROWS; ++r) {
            const int j = k - r; // uniform, as in block
            if (j < 0 || j >= H)
                continue;
            const float weight = kernel_y[j];
#pragma unroll
            for (int o = 0; o < 8; ++o)
                sum[r][o] = mad(weight, horizontal[o], sum[r][o]);
        }
    }
#pragma unroll
    for (int r = 0; r < SEPBLOCK_ROWS; ++r)
        if (y0 + r < h)
            store_block_row(sum[r], delta, dst, dst_offset, dst_stride, y0 + r, x0, w, dst_aligned);
}

// convolve_block_w<W>(src, dst, width, height, weights, kernel_height, border,
// border_value, delta) and convolve_sepblock_w<W>(src, dst, width, height, kernel_x,
// kernel_y, kernel_height, border, border_value, border_row, delta) for kernels W wide.
#define CONVOLVE_WIDTH_KERNELS(W)                                                                              \
    __kernel void convolve_block_w##W(__global const uchar* restrict src, uint src_offset, uint src_stride,    \
                                      __global uchar* restrict dst, uint dst_offset, uint dst_stride,          \
                                      uint width, uint height, __constant float* weights, uint kernel_height,  \
                                      uint border, uint border_value, float delta)                             \
    {                                                                                                          \
        block_body(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, weights,           \
                   kernel_height, border, border_value, delta, W);                                             \
    }                                                                                                          \
    __kernel void convolve_sepblock_w##W(__global const uchar* restrict src, uint src_offset, uint src_stride, \
                                         __global uchar* restrict dst, uint dst_offset, uint dst_stride,       \
                                         uint width, uint height, __constant float* kernel_x,                  \
                                         __constant float* kernel_y, uint kernel_height, uint border,          \
                                         uint border_value, float border_row, float delta)                     \
    {                                                                                                          \
        sepblock_body(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, kernel_x,       \
                      kernel_y, kernel_height, border, border_value, border_row, delta, W);                    \
    }

CONVOLVE_WIDTH_KERNELS(1)
CONVOLVE_WIDTH_KERNELS(2)
CONVOLVE_WIDTH_KERNELS(3)
CONVOLVE_WIDTH_KERNELS(4)
CONVOLVE_WIDTH_KERNELS(5)
CONVOLVE_WIDTH_KERNELS(6)
CONVOLVE_WIDTH_KERNELS(7)
CONVOLVE_WIDTH_KERNELS(8)
CONVOLVE_WIDTH_KERNELS(9)

#ifdef __IMAGE_SUPPORT__
// convolve_image: direct's one output per work item, its window read from an image
// (guide §6.2): the texture cache serves the overlap of neighbouring windows, the
// sampler the replicate border. Reads kernel_width x kernel_height texels, writes 1 byte.
__kernel void convolve_image(__read_only image2d_t src, __global uchar* restrict dst, uint dst_offset,
                             uint dst_stride, uint width, uint height, __constant float* weights,
                             uint kernel_width, uint kernel_height, uint border, uint border_value, float delta)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int left = x - (int)(kernel_width / 2);
    const int top = y - (int)(kernel_height / 2);
    float sum = 0.0f;
    for (int j = 0; j < (int)kernel_height; ++j) {
        __constant float* w = weights + j * kernel_width;
        for (int i = 0; i < (int)kernel_width; ++i)
            sum = mad(w[i], (float)framecl_read_pixel(src, left + i, top + j, width, height, border, border_value),
                      sum);
    }
    dst[dst_offset + y * dst_stride + x] = convert_uchar_sat_rte(sum + delta);
}
#endif
