// Epsilon filter (guide 80-NB295-11 §10.3): R8 -> R8. Each output pixel is the mean of
// the pixels p of its (2r+1)x(2r+1) window with |p - c| <= threshold, c the centre
// (which always counts), rounded to nearest with halves up; pixels outside the image
// follow `border` (docs/filters.md). The variants are the guide's steps, side by side:
//
//   epsilon_baseline         §10.3.1: one output pixel per work item; each window pixel
//                            is loaded, converted to float and compared, with a branch.
//                            Reads (2r+1)^2 + 1 bytes (82 for r = 4) and writes 1 byte
//                            per output pixel.
//   epsilon_packed_r<r>      §10.3.2 and §10.3.3: four output pixels per work item. Each
//                            window row is loaded once, as 20 bytes in two vector loads
//                            (the centre row once more for the centres), and held in
//                            registers while the four windows slide over it; the ternary
//                            operator selects, as in the guide. Reads 5(2r+2) bytes (50
//                            for r = 4) and writes 1 byte per output pixel.
//   epsilon_branchless_r<r>  packed with §10.3.6's branch removal: each comparison becomes
//                            1.0 or 0.0, and one multiply-add accumulates the sum and the
//                            count together. Bytes as packed.
//   epsilon_half_r<r>        branchless in half precision (§10.3.2) where the device has
//                            cl_khr_fp16, in float where it has not; the sum and the
//                            count apart, as half cannot hold them together. Bytes as
//                            packed.
//   epsilon_wide16_r<r>      branchless for 16 output pixels of a row per work item: each
//                            window row loaded once as 32 bytes (aligned 8-byte loads
//                            where the offset and stride allow) and unpacked by bit
//                            operations alone; the threshold test by saturation. Reads
//                            2(2r+1) bytes (18 for r = 4) per output pixel.
//   epsilon_wide16x2_r<r>    wide16 for 16x2 pixels: the two rows' 2r + 2 window rows
//                            loaded once. Reads (2r+2) bytes (10 for r = 4) per output.
//   epsilon_image            one pixel per work item, the window read from an image
//                            (guide §6.2), branchless (at the end of this file).
//
// Pixels are compared as the values 0..255, not normalised to 0..1 as the guide's UNORM
// image reads are, so every threshold test is exact; every mean is divided and rounded
// in integers, (2 sum + count) / (2 count). Float holds whole numbers below 2^24 exactly,
// and every float sum here stays below that, so all variants are exact but half in half
// precision. That one sums each window row in half: exact up to 2048, off by at most 1 per
// addition above (the sums stay whole), and only the 9th and later counted pixels of a
// row can take a sum past 2048. So the sum is off by less than the count, the mean by
// less than 1, and the result by at most 1.
//
// The packed variants compute in float rather than in 32-bit integers because GPUs issue
// float at least as fast (NVIDIA's twice as fast: docs/benchmarks.md, "Block matching"). A pixel
// becomes the float 2^23 + p by setting the exponent bits above its byte, without a
// conversion instruction; differences of two such floats are exact.

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half real;
typedef half4 real4;
#define convert_real4 convert_half4
#else
typedef float real;
typedef float4 real4;
#define convert_real4 convert_float4
#endif

// Border rules: framecl_border_index and FRAMECL_BORDER_* (kernels/prelude.cl, which the
// daemon builds in front of this file).

// Pixels x0 - SPAN_LEFT .. x0 + 11 of a row: the windows of the four outputs x0 .. x0 + 3
// at radius 7, the largest, loaded as 16 bytes and 4.
#define SPAN_LEFT 8
#define SPAN 20

// The bits of the float 2^23, and the float: 2^23 + p has p in its low mantissa bits.
#define EXPONENT_2_23 0x4B000000u
#define FLOAT_2_23 8388608.0f

// Pixels x0 - SPAN_LEFT .. x0 - SPAN_LEFT + SPAN - 1 of row `row` (an index from
// framecl_border_index, -1 for a row of the constant border) into `span` as the floats 2^23 + p.
// Work items away from the left and right edges take two vector loads; the others map
// each pixel.
void load_row(__global const uchar* restrict src, uint src_offset, uint src_stride, int width,
              int row, int x0, uint border, uint border_value, float* span)
{
    const int left = x0 - SPAN_LEFT;
    if (row >= 0 && left >= 0 && left + SPAN <= width) {
        __global const uchar* pixels = src + src_offset + row * src_stride + left;
        vstore16(as_float16(convert_uint16(vload16(0, pixels)) | EXPONENT_2_23), 0, span);
        vstore4(as_float4(convert_uint4(vload4(0, pixels + 16)) | EXPONENT_2_23), 4, span);
        return;
    }
    for (int k = 0; k < SPAN; ++k) {
        const int column = framecl_border_index(left + k, width, border);
        const uint p =
            row < 0 || column < 0 ? border_value : src[src_offset + row * src_stride + column];
        span[k] = as_float(p | EXPONENT_2_23);
    }
}

// Outputs x0 .. x0 + 3 of row y, those inside the image.
void store_outputs(__global uchar* restrict dst, uint dst_offset, uint dst_stride, int width, int y,
                   int x0, uchar4 value)
{
    __global uchar* row = dst + dst_offset + y * dst_stride;
    if (x0 + 4 <= width) {
        vstore4(value, 0, row + x0);
        return;
    }
    row[x0] = value.s0;
    if (x0 + 1 < width)
        row[x0 + 1] = value.s1;
    if (x0 + 2 < width)
        row[x0 + 2] = value.s2;
}

// The input pixel at (column, row), inside the image. Where the daemon fuses the stages
// before this one into its loads (docs/architecture.md, "Fusion"), it is their output
// there, computed from the run's input; baseline and the wide variants read through it,
// and only they say they are fusable (plugins/epsilon/epsilon.cpp).
#if FRAMECL_FUSED_INPUT
#define EPSILON_PIXEL(src, offset, stride, column, row) \
    framecl_fused_input(src, offset, stride FRAMECL_FUSED_ARGS, column, row).x
#else
#define EPSILON_PIXEL(src, offset, stride, column, row) (src)[(offset) + (row) * (stride) + (column)]
#endif

#if FRAMECL_KERNEL_WANTED(epsilon_baseline)
__kernel void epsilon_baseline(__global const uchar* restrict src, uint src_offset, uint src_stride,
                               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                               uint width, uint height, uint radius, uint threshold, uint border,
                               uint border_value FRAMECL_FUSED_PARAMS)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    const int w = width, h = height, r = radius;
    if (x >= w || y >= h)
        return;
    const float c = EPSILON_PIXEL(src, src_offset, src_stride, x, y);
    const float t = threshold;
    float sum = 0.0f, count = 0.0f;
    for (int dy = -r; dy <= r; ++dy) {
        const int row = framecl_border_index(y + dy, h, border);
        for (int dx = -r; dx <= r; ++dx) {
            const int column = framecl_border_index(x + dx, w, border);
            const float p = row < 0 || column < 0
                                ? (float)border_value
                                : (float)EPSILON_PIXEL(src, src_offset, src_stride, column, row);
            if (fabs(p - c) <= t) {
                sum += p;
                count += 1.0f;
            }
        }
    }
    // Both are whole numbers below 2^24, held exactly; the division is done in integers
    // so that no float rounding moves a mean that is exactly halfway.
    const int s = sum, n = count;
    dst[dst_offset + y * dst_stride + x] = (uchar)((2 * s + n) / (2 * n));
}
#endif

static inline __attribute__((always_inline))
void packed_body(__global const uchar* restrict src, uint src_offset, uint src_stride,
                 __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                 uint width, uint height, const int r, uint threshold, uint border,
                 uint border_value)
{
    const int x0 = 4 * get_global_id(0);
    const int y = get_global_id(1);
    const int w = width, h = height;
    if (x0 >= w || y >= h)
        return;
    // A lane past the right edge (never stored) takes as its centre the pixel the border
    // gives there, which is also its window's middle: every lane counts its centre.
    float span[SPAN];
    load_row(src, src_offset, src_stride, w, y, x0, border, border_value, span);
    const float4 c = vload4(0, span + SPAN_LEFT) - FLOAT_2_23;
    const float4 t = (float)threshold;
    float4 sum = 0.0f, count = 0.0f;
    for (int dy = -r; dy <= r; ++dy) {
        load_row(src, src_offset, src_stride, w, framecl_border_index(y + dy, h, border), x0, border,
                 border_value, span);
        float values[SPAN];
#pragma unroll
        for (int k = 0; k < SPAN; ++k)
            values[k] = span[k] - FLOAT_2_23;
#pragma unroll
        for (int dx = -r; dx <= r; ++dx) {
            const float4 p = vload4(0, values + SPAN_LEFT + dx);
            const int4 take = fabs(p - c) <= t;
            sum += take ? p : (float4)(0.0f);
            count += take ? (float4)(1.0f) : (float4)(0.0f);
        }
    }
    const int4 s = convert_int4(sum), n = convert_int4(count);
    store_outputs(dst, dst_offset, dst_stride, w, y, x0, convert_uchar4((2 * s + n) / (2 * n)));
}

// The sum and the count in one float: each counted pixel adds p + 2^16, so the total is
// sum + 2^16 count, below 225 x (255 + 2^16) < 2^24 and so exact, and the sum (at most
// 225 x 255 < 2^16) and the count come back out of its bits.
#define COUNT_UNIT 65536.0f

static inline __attribute__((always_inline))
void branchless_body(__global const uchar* restrict src, uint src_offset, uint src_stride,
                     __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                     uint width, uint height, const int r, uint threshold, uint border,
                     uint border_value)
{
    const int x0 = 4 * get_global_id(0);
    const int y = get_global_id(1);
    const int w = width, h = height;
    if (x0 >= w || y >= h)
        return;
    float span[SPAN];
    load_row(src, src_offset, src_stride, w, y, x0, border, border_value, span);
    const float4 c = vload4(0, span + SPAN_LEFT) - (FLOAT_2_23 - COUNT_UNIT);
    const float4 t = (float)threshold;
    float4 total = 0.0f;
    for (int dy = -r; dy <= r; ++dy) {
        load_row(src, src_offset, src_stride, w, framecl_border_index(y + dy, h, border), x0, border,
                 border_value, span);
        float weighted[SPAN]; // p + 2^16
#pragma unroll
        for (int k = 0; k < SPAN; ++k)
            weighted[k] = span[k] - (FLOAT_2_23 - COUNT_UNIT);
#pragma unroll
        for (int dx = -r; dx <= r; ++dx) {
            const float4 p = vload4(0, weighted + SPAN_LEFT + dx);
            // step() gives 1.0 where |p - c| <= t and 0.0 elsewhere: the guide's
            // convert(-(fabs(c - p) <= T)) without a conversion.
            total = fma(step(fabs(p - c), t), p, total);
        }
    }
    const uint4 bits = convert_uint4(total);
    const uint4 s = bits & 0xffffu, n = bits >> 16;
    store_outputs(dst, dst_offset, dst_stride, w, y, x0, convert_uchar4((2 * s + n) / (2 * n)));
}

static inline __attribute__((always_inline))
void half_body(__global const uchar* restrict src, uint src_offset, uint src_stride,
               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
               uint width, uint height, const int r, uint threshold, uint border,
               uint border_value)
{
    const int x0 = 4 * get_global_id(0);
    const int y = get_global_id(1);
    const int w = width, h = height;
    if (x0 >= w || y >= h)
        return;
    float span[SPAN];
    load_row(src, src_offset, src_stride, w, y, x0, border, border_value, span);
    const real4 c = convert_real4(vload4(0, span + SPAN_LEFT) - FLOAT_2_23);
    const real4 t = (real)threshold;
    float4 sum = 0.0f, count = 0.0f;
    for (int dy = -r; dy <= r; ++dy) {
        load_row(src, src_offset, src_stride, w, framecl_border_index(y + dy, h, border), x0, border,
                 border_value, span);
        real values[SPAN];
#pragma unroll
        for (int k = 0; k < SPAN; ++k)
            values[k] = (real)(span[k] - FLOAT_2_23);
        // A row's sum is at most 15 x 255 = 3825, which half holds within the bounds
        // above; the rows add up in float, which holds every total exactly.
        real4 row_sum = (real4)(0), row_count = (real4)(0);
#pragma unroll
        for (int dx = -r; dx <= r; ++dx) {
            const real4 p = vload4(0, values + SPAN_LEFT + dx);
            const real4 take = step(fabs(p - c), t);
            row_sum = fma(take, p, row_sum);
            row_count += take;
        }
        sum += convert_float4(row_sum);
        count += convert_float4(row_count);
    }
    const int4 s = convert_int4(sum), n = convert_int4(count);
    store_outputs(dst, dst_offset, dst_stride, w, y, x0, convert_uchar4((2 * s + n) / (2 * n)));
}

// The wide variants: n output pixels of a row (16; the code takes 8 too, which is
// slower: docs/benchmarks.md, "Choices inside the kernels") of m rows per work item,
// branchless as above. Each window row is held as the n + 16 floats p + 2^16 of pixels
// x0 - WIDE_LEFT .. x0 + n + WIDE_LEFT - 1 (radius 7 needs 7 a side); so the bytes
// loaded and unpacked per output pixel and row fall from 5 (packed) to 2 (n = 16).
#define WIDE_LEFT 8
#define WIDE_SPAN_MAX 32
#define WIDE_ROWS_MAX 2
// The bits of the float 2^16 = COUNT_UNIT, whose mantissa steps by 2^-7.
#define EXPONENT_2_16 0x47800000u

// Row `row` (an index from framecl_border_index, -1 for a row of the constant border) into
// `weighted`. Work items away from the left and right edges load the row's bytes as
// words: with 8-byte loads where `aligned` (the offset and the stride multiples of 8, so
// that x0 - WIDE_LEFT, a multiple of 8, starts an aligned word in every row), else with
// vload4 on the byte pointer (or where the program fuses stages into these loads, with
// EPSILON_PIXEL for each); the others map each pixel through framecl_border_index.
static inline __attribute__((always_inline))
void wide_load_row(__global const uchar* restrict src, uint src_offset, uint src_stride, int width,
                   int row, int x0, uint border, uint border_value, bool aligned, const int n,
                   float* weighted FRAMECL_FUSED_PARAMS)
{
    const int left = x0 - WIDE_LEFT;
    const int span = n + 2 * WIDE_LEFT;
    if (row >= 0 && left >= 0 && left + span <= width) {
#if FRAMECL_FUSED_INPUT
        // The fused stages' output for each pixel of the row, no border to map.
#pragma unroll
        for (int k = 0; k < span; ++k)
            weighted[k] = as_float((EPSILON_PIXEL(src, src_offset, src_stride, left + k, row) << 7) | EXPONENT_2_16);
        return;
#endif
        __global const uchar* pixels = src + src_offset + row * src_stride + left;
        uint words[WIDE_SPAN_MAX / 4];
        if (aligned) {
#pragma unroll
            for (int k = 0; k < span / 8; ++k) {
                const uint2 word = ((__global const uint2*)pixels)[k];
                words[2 * k] = word.x;
                words[2 * k + 1] = word.y;
            }
        } else {
#pragma unroll
            for (int k = 0; k < span / 4; ++k)
                words[k] = as_uint(vload4(k, pixels));
        }
        // The float 2^16 + p, p in the mantissa bits 7..14: a shift and a mask per byte,
        // without a conversion or an addition.
#pragma unroll
        for (int k = 0; k < span; ++k)
            weighted[k] = as_float((((words[k / 4] >> (8 * (k % 4))) & 0xffu) << 7) | EXPONENT_2_16);
        return;
    }
    for (int k = 0; k < span; ++k) {
        const int column = framecl_border_index(left + k, width, border);
        const uint p =
            row < 0 || column < 0 ? border_value : EPSILON_PIXEL(src, src_offset, src_stride, column, row);
        weighted[k] = (float)p + COUNT_UNIT;
    }
}

// n = 8 or 16 outputs of each of m = 1 or 2 rows per work item: the m rows share the
// window rows they have in common, loaded and unpacked once (2r + m loads for m rows).
static inline __attribute__((always_inline))
void wide_accumulate(const float* weighted, const float* c, float* total, float t1, const int r,
                     const int n)
{
#pragma unroll
    for (int i = 0; i < n; ++i) {
#pragma unroll
        for (int dx = -r; dx <= r; ++dx) {
            // p and c[i] are 2^16 plus whole numbers, t1 the threshold + 1: the clamp is
            // 1.0 exactly where |p - c| <= threshold and 0.0 elsewhere, one saturating
            // add (FADD.SAT on NVIDIA) where step() is a compare.
            const float p = weighted[WIDE_LEFT + i + dx];
            total[i] = fma(clamp(t1 - fabs(p - c[i]), 0.0f, 1.0f), p, total[i]);
        }
    }
}

// (2 s + n) / (2 n) in integers, for a mean s / n of at most 255 and 1 <= n <= 225:
// both operands are whole floats, and the quotient is below 256, so a reciprocal good to
// 8 bits (native_recip is good to about 23 on GPUs) leaves the float quotient within 1
// of the real one: its truncation is the integer quotient or one off, and one
// correction by the remainder makes it exact. Cheaper than the integer division.
static inline uint rounded_mean(uint s, uint n)
{
    const uint a = 2 * s + n, b = 2 * n;
    const uint q = convert_uint((float)a * native_recip((float)b));
    const int remainder = (int)a - (int)(q * b);
    return q + (remainder >= (int)b) - (remainder < 0);
}

static inline __attribute__((always_inline))
void wide_store(__global uchar* restrict dst, uint dst_offset, uint dst_stride, int w, int y,
                int x0, const float* total, const int n)
{
    uchar value[16];
#pragma unroll
    for (int i = 0; i < n; ++i) {
        const uint bits = convert_uint(total[i]);
        const uint s = bits & 0xffffu, count = bits >> 16;
        value[i] = (uchar)rounded_mean(s, count);
    }
    __global uchar* row = dst + dst_offset + y * dst_stride + x0;
    if (x0 + n <= w && ((dst_offset | dst_stride) & (uint)(n - 1)) == 0) {
        if (n == 16)
            *(__global uint4*)row = as_uint4(vload16(0, value));
        else
            *(__global uint2*)row = as_uint2(vload8(0, value));
        return;
    }
    for (int i = 0; i < n; ++i)
        if (x0 + i < w)
            row[i] = value[i];
}

static inline __attribute__((always_inline))
void wide_body(__global const uchar* restrict src, uint src_offset, uint src_stride,
               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
               uint width, uint height, const int r, uint threshold, uint border,
               uint border_value, const int n, const int m FRAMECL_FUSED_PARAMS)
{
    const int x0 = n * get_global_id(0);
    const int y0 = m * get_global_id(1);
    const int w = width, h = height;
    if (x0 >= w || y0 >= h)
        return;
    // Uniform over the dispatch: every work item takes the same path for interior rows.
    const bool aligned = ((src_offset | src_stride) & 7u) == 0;
    float weighted[WIDE_SPAN_MAX];
    // As in packed: a lane past the right edge, or a row past the bottom (never stored),
    // takes as its centre the pixel the border gives there, its window's middle, so every
    // lane counts its centre.
    float c[WIDE_ROWS_MAX][16], total[WIDE_ROWS_MAX][16];
#pragma unroll
    for (int j = 0; j < m; ++j) {
        wide_load_row(src, src_offset, src_stride, w, framecl_border_index(y0 + j, h, border), x0, border,
                      border_value, aligned, n, weighted FRAMECL_FUSED_ARGS);
#pragma unroll
        for (int i = 0; i < n; ++i) {
            c[j][i] = weighted[WIDE_LEFT + i];
            total[j][i] = 0.0f;
        }
    }
    const float t1 = (float)threshold + 1.0f;
    for (int dy = -r; dy <= r + m - 1; ++dy) {
        wide_load_row(src, src_offset, src_stride, w, framecl_border_index(y0 + dy, h, border), x0, border,
                      border_value, aligned, n, weighted FRAMECL_FUSED_ARGS);
#pragma unroll
        for (int j = 0; j < m; ++j)
            if (dy >= j - r && dy <= j + r)
                wide_accumulate(weighted, c[j], total[j], t1, r, n);
    }
#pragma unroll
    for (int j = 0; j < m; ++j)
        if (y0 + j < h)
            wide_store(dst, dst_offset, dst_stride, w, y0 + j, x0, total[j], n);
}

// One kernel per variant and radius, epsilon_<variant>_r<radius>. Their loops over the
// window need constant bounds for the compiler to unroll them and keep the row in
// registers (guide §8.4). One kernel that switched to a body per radius was slower,
// most likely because a kernel's registers are allocated for its largest path, radius
// 7's (docs/benchmarks.md, "Choices inside the kernels"). packed, branchless and half
// take no loads, so a fused program holds none of them; wide16 and wide16x2 do, and
// each is its own #if so that a fused program holds only the one its run dispatches
// (kernels/prelude.cl, FRAMECL_KERNEL_WANTED).
#define EPSILON_KERNELS(r)                                                                  \
    __kernel void epsilon_packed_r##r(__global const uchar* restrict src, uint src_offset, \
                                      uint src_stride, __global uchar* restrict dst,       \
                                      uint dst_offset, uint dst_stride, uint width,        \
                                      uint height, uint threshold, uint border,            \
                                      uint border_value)                                   \
    {                                                                                      \
        packed_body(src, src_offset, src_stride, dst, dst_offset, dst_stride, width,       \
                    height, r, threshold, border, border_value);                           \
    }                                                                                      \
    __kernel void epsilon_branchless_r##r(__global const uchar* restrict src,              \
                                          uint src_offset, uint src_stride,                \
                                          __global uchar* restrict dst, uint dst_offset,   \
                                          uint dst_stride, uint width, uint height,        \
                                          uint threshold, uint border, uint border_value)  \
    {                                                                                      \
        branchless_body(src, src_offset, src_stride, dst, dst_offset, dst_stride, width,   \
                        height, r, threshold, border, border_value);                       \
    }                                                                                      \
    __kernel void epsilon_half_r##r(__global const uchar* restrict src, uint src_offset,   \
                                    uint src_stride, __global uchar* restrict dst,         \
                                    uint dst_offset, uint dst_stride, uint width,          \
                                    uint height, uint threshold, uint border,              \
                                    uint border_value)                                     \
    {                                                                                      \
        half_body(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, \
                  r, threshold, border, border_value);                                     \
    }

// epsilon_wide16_r<r> (rows 1) or epsilon_wide16x2_r<r> (rows 2, `name` wide16x2).
#define EPSILON_WIDE_KERNEL(name, r, rows)                                                 \
    __kernel void epsilon_##name##_r##r(__global const uchar* restrict src, uint src_offset, \
                                        uint src_stride, __global uchar* restrict dst,     \
                                        uint dst_offset, uint dst_stride, uint width,      \
                                        uint height, uint threshold, uint border,          \
                                        uint border_value FRAMECL_FUSED_PARAMS)            \
    {                                                                                      \
        wide_body(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, \
                  r, threshold, border, border_value, 16, rows FRAMECL_FUSED_ARGS);        \
    }

#if !FRAMECL_FUSED_BUILD
EPSILON_KERNELS(1)
EPSILON_KERNELS(2)
EPSILON_KERNELS(3)
EPSILON_KERNELS(4)
EPSILON_KERNELS(5)
EPSILON_KERNELS(6)
EPSILON_KERNELS(7)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r1)
EPSILON_WIDE_KERNEL(wide16, 1, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r1)
EPSILON_WIDE_KERNEL(wide16x2, 1, 2)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r2)
EPSILON_WIDE_KERNEL(wide16, 2, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r2)
EPSILON_WIDE_KERNEL(wide16x2, 2, 2)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r3)
EPSILON_WIDE_KERNEL(wide16, 3, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r3)
EPSILON_WIDE_KERNEL(wide16x2, 3, 2)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r4)
EPSILON_WIDE_KERNEL(wide16, 4, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r4)
EPSILON_WIDE_KERNEL(wide16x2, 4, 2)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r5)
EPSILON_WIDE_KERNEL(wide16, 5, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r5)
EPSILON_WIDE_KERNEL(wide16x2, 5, 2)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r6)
EPSILON_WIDE_KERNEL(wide16, 6, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r6)
EPSILON_WIDE_KERNEL(wide16x2, 6, 2)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16_r7)
EPSILON_WIDE_KERNEL(wide16, 7, 1)
#endif
#if FRAMECL_KERNEL_WANTED(epsilon_wide16x2_r7)
EPSILON_WIDE_KERNEL(wide16x2, 7, 2)
#endif

#if defined(__IMAGE_SUPPORT__) && !FRAMECL_FUSED_BUILD
// epsilon_image: baseline's one pixel per work item, its window read from an image
// (guide §6.2: the texture cache serves the windows' overlap, the sampler the replicate
// border) and accumulated without branches (§10.3.6). epsilon_image_to_image writes an
// image too, where the next stage reads one (include/framecl/plugin.h).
uint epsilon_image_pixel(__read_only image2d_t src, int x, int y, int w, int h, int r, uint threshold,
                         uint border, uint border_value)
{
    const float c = framecl_read_pixel(src, x, y, w, h, border, border_value);
    const float t = threshold;
    float sum = 0.0f, count = 0.0f;
    for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
            const float p = framecl_read_pixel(src, x + dx, y + dy, w, h, border, border_value);
            const float in = fabs(p - c) <= t ? 1.0f : 0.0f;
            sum = mad(in, p, sum);
            count += in;
        }
    const int s = sum, n = count;
    return (uint)((2 * s + n) / (2 * n));
}

__kernel void epsilon_image(__read_only image2d_t src, __global uchar* restrict dst, uint dst_offset,
                            uint dst_stride, uint width, uint height, uint radius, uint threshold, uint border,
                            uint border_value)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    dst[dst_offset + y * dst_stride + x] =
        (uchar)epsilon_image_pixel(src, x, y, width, height, radius, threshold, border, border_value);
}

__kernel void epsilon_image_to_image(__read_only image2d_t src, __write_only image2d_t dst, uint width,
                                     uint height, uint radius, uint threshold, uint border, uint border_value)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    write_imageui(dst, (int2)(x, y),
                  (uint4)(epsilon_image_pixel(src, x, y, width, height, radius, threshold, border, border_value),
                          0, 0, 1));
}
#endif
