// Sobel gradients of an R8 plane (guide §10.4), as docs/filters.md specifies them.
//
// gx = [-1 0 1; -2 0 2; -1 0 1] and gy = [-1 -2 -1; 0 0 0; 1 2 1] applied as
// correlation, as OpenCV's Sobel with ksize = 3: gx is right minus left, gy bottom
// minus top. Pixels outside the image follow `border`. Every kernel takes `result`,
// what it writes per pixel:
//   RESULT_GX, RESULT_GY  gx or gy in an R16 plane, two's complement, low byte first
//   RESULT_L1             min(|gx| + |gy|, 255) in an R8 plane
//   RESULT_L2             round(sqrt(gx² + gy²)), halves up, saturated to 255, in R8
// Everything is integer arithmetic except the L2 square root, whose float estimate is
// corrected to the exact rounded root (magnitudeL2): every variant equals the CPU
// reference on every pixel.
//
// Guide §10.4.1: the filter is separable. Per input row, diff = right - left and
// smooth = left + 2 centre + right; then gx = diff(above) + 2 diff(row) + diff(below)
// and gy = smooth(below) - smooth(above). The wide variants compute both once per
// input row and use them for every output row that needs them.
//
// Guide §10.4.2-10.4.3, the variants (the guide's Table 10-5); per output pixel:
//   sobel_pixel      one output per work item: reads 9 bytes (3x3); writes 1 byte
//                    (R8) or 2 (R16)
//   sobel_row16      16x1 outputs per work item, each of 3 rows loaded with a vload16
//                    and a vload2: reads 18x3 = 54 bytes per 16 outputs (3.375 per
//                    output); writes 1 or 2
//   sobel_block16x2  16x2 outputs per work item, 4 rows loaded the same way: reads
//                    18x4 = 72 bytes per 32 outputs (2.25 per output); writes 1 or 2
//   sobel_aligned16x4  16x4 outputs per work item, walking down 6 input rows (1.5
//                    bytes read per output): each row is one 16-byte load of its 16
//                    centre pixels and one byte load each for the pixels left and
//                    right of them; each output row one 16-byte store (two for R16).
//                    Those are aligned uint4 accesses when the planes' offsets and
//                    strides are multiples of 16 (else vload16 / vstore16): NVIDIA's
//                    compiler splits a vload16 at an address it cannot prove aligned
//                    into byte loads, and a uchar16 reinterpreted from a uint4 into
//                    4-byte ones, so the pixels stay in 32-bit words throughout: two
//                    16-bit lanes per word (SIMD within a register), sums kept
//                    non-negative by biases so that no lane carries into the next.
//                    Borders apply per row and to the two side pixels, so only blocks
//                    reaching past the last column take the one-pixel path.
// Work items of the wide variants whose window leaves the image (the first block of
// each row, blocks that reach the last column, the first and last rows) take the
// one-pixel path for each of their outputs: 9 bytes per output.
// Short vectors hold the sums (§10.4.4: "short type is preferred"): |gx|, |gy| <= 1020.

// Border rules: framecl_border_index and FRAMECL_BORDER_* (kernels/prelude.cl, which the
// daemon builds in front of this file).

// `result` (plugins/sobel/sobel.cpp, enum Result).
#define RESULT_GX 0u
#define RESULT_GY 1u
#define RESULT_L1 2u
#define RESULT_L2 3u

// 255.5² = 65280.25: a larger sum of squares rounds to 256 or more, saturated to 255.
#define L2_SATURATED 65281

// Pixel (x, y), where a 3x3 window reaches one pixel past each edge, under `border`
// (framecl_border_index in kernels/prelude.cl).
int pixelAt(__global const uchar* src, uint src_offset, uint src_stride, int width, int height,
            int x, int y, uint border, uint border_value)
{
    const int row = framecl_border_index(y, height, border);
    const int column = framecl_border_index(x, width, border);
    if (row < 0 || column < 0)
        return (int)border_value;
    return src[src_offset + (uint)row * src_stride + (uint)column];
}

// The pixels x - 1, x, x + 1 of row y, borders applied.
int3 windowRow(__global const uchar* src, uint src_offset, uint src_stride, int width, int height,
               int x, int y, uint border, uint border_value)
{
    const int left =
        pixelAt(src, src_offset, src_stride, width, height, x - 1, y, border, border_value);
    const int centre =
        pixelAt(src, src_offset, src_stride, width, height, x, y, border, border_value);
    const int right =
        pixelAt(src, src_offset, src_stride, width, height, x + 1, y, border, border_value);
    return (int3)(left, centre, right);
}

// round(sqrt(s)) for s = gx² + gy², saturated to 255. No integer's root lies on a
// half, so the rounded root of s is the r >= 0 with r² - r < s <= r² + r (for r > 0).
// The float estimate is within one of it whatever the few-ulp error of sqrt, and the
// two steps move it there.
uchar magnitudeL2(int gx, int gy)
{
    const int s = min(gx * gx + gy * gy, L2_SATURATED);
    int r = convert_int_rte(sqrt((float)s));
    if (r * r + r < s)
        ++r;
    if (r > 0 && r * r - r >= s)
        --r;
    return (uchar)min(r, 255);
}

// magnitudeL2 on 16 pixels. A vector comparison gives -1 where it holds.
uchar16 magnitudeL2x16(short16 gx, short16 gy)
{
    const int16 x = convert_int16(gx);
    const int16 y = convert_int16(gy);
    const int16 s = min(x * x + y * y, L2_SATURATED);
    int16 r = convert_int16_rte(sqrt(convert_float16(s)));
    r -= r * r + r < s;
    r += (r > 0) & (r * r - r >= s);
    return convert_uchar16_sat(r);
}

void storeGradient(__global uchar* dst, uint dst_offset, uint dst_stride, uint x, uint y, int3 above, int3 at,
                   int3 below, uint result);

// One output pixel at (x, y) from its 3x3 window, borders applied: the whole of
// sobel_pixel, and the path of the wide variants at the image's edges.
void sobelPixel(__global const uchar* src, uint src_offset, uint src_stride, __global uchar* dst,
                uint dst_offset, uint dst_stride, uint width, uint height, uint x, uint y,
                uint result, uint border, uint border_value)
{
    const int w = (int)width, h = (int)height;
    const int3 above =
        windowRow(src, src_offset, src_stride, w, h, (int)x, (int)y - 1, border, border_value);
    const int3 at =
        windowRow(src, src_offset, src_stride, w, h, (int)x, (int)y, border, border_value);
    const int3 below =
        windowRow(src, src_offset, src_stride, w, h, (int)x, (int)y + 1, border, border_value);
    storeGradient(dst, dst_offset, dst_stride, x, y, above, at, below, result);
}

// Output (x, y) from the rows above, at and below it (x - 1, x, x + 1 each).
void storeGradient(__global uchar* dst, uint dst_offset, uint dst_stride, uint x, uint y, int3 above, int3 at,
                   int3 below, uint result)
{
    const int gx = (above.z - above.x) + 2 * (at.z - at.x) + (below.z - below.x);
    const int gy = (below.x + 2 * below.y + below.z) - (above.x + 2 * above.y + above.z);

    if (result == RESULT_GX || result == RESULT_GY) {
        const ushort g = (ushort)(result == RESULT_GX ? gx : gy); // two's complement
        __global uchar* out = dst + dst_offset + y * dst_stride + 2 * x;
        out[0] = (uchar)(g & 0xff);
        out[1] = (uchar)(g >> 8);
    } else {
        dst[dst_offset + y * dst_stride + x] =
            result == RESULT_L1 ? (uchar)min(abs(gx) + abs(gy), 255u) : magnitudeL2(gx, gy);
    }
}

// The outputs x0 .. x0 + 15 of rows y0 .. y0 + rows - 1 that lie in the image, one by
// one: the wide variants' work items whose window leaves the image.
void sobelEdgeBlock(__global const uchar* src, uint src_offset, uint src_stride,
                    __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height,
                    uint x0, uint y0, uint rows, uint result, uint border, uint border_value)
{
    for (uint y = y0; y < min(y0 + rows, height); ++y)
        for (uint x = x0; x < min(x0 + 16, width); ++x)
            sobelPixel(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, x,
                       y, result, border, border_value);
}

// One input row's horizontal passes for the outputs x0 .. x0 + 15, from its pixels
// x0 - 1 .. x0 + 16 loaded as the guide loads them (§10.4.3): a vload16 and a vload2.
typedef struct {
    short16 diff;   // right - left
    short16 smooth; // left + 2 centre + right
} RowPass;

RowPass rowPass(__global const uchar* at_x0)
{
    const short16 left = convert_short16(vload16(0, at_x0 - 1));
    const short2 tail = convert_short2(vload2(0, at_x0 + 15));
    const short16 centre = (short16)(left.s1234, left.s5678, left.s9abc, left.sdef, tail.s0);
    const short16 right = (short16)(left.s2345, left.s6789, left.sabcd, left.sef, tail);
    RowPass pass;
    pass.diff = right - left;
    pass.smooth = left + (short)2 * centre + right;
    return pass;
}

// The vertical pass over the rows above, at and below an output row, and its 16
// outputs x0 .. x0 + 15 written with vector stores.
void store16(__global uchar* dst, uint dst_offset, uint dst_stride, uint x0, uint y, RowPass above,
             RowPass at, RowPass below, uint result)
{
    const short16 gx = above.diff + (short)2 * at.diff + below.diff;
    const short16 gy = below.smooth - above.smooth;
    if (result == RESULT_GX || result == RESULT_GY) {
        // Each R16 value as its low byte, then its high byte: pixels 0-7, then 8-15.
        const uchar16 first = (uchar16)(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const uchar16 second = first + (uchar)8;
        const ushort16 g = as_ushort16(result == RESULT_GX ? gx : gy);
        const uchar16 low = convert_uchar16(g & (ushort)0xff);
        const uchar16 high = convert_uchar16(g >> (ushort)8);
        __global uchar* out = dst + dst_offset + y * dst_stride + 2 * x0;
        vstore16(shuffle2(low, high, first), 0, out);
        vstore16(shuffle2(low, high, second), 0, out + 16);
    } else {
        const uchar16 magnitude =
            result == RESULT_L1 ? convert_uchar16_sat(abs(gx) + abs(gy)) : magnitudeL2x16(gx, gy);
        vstore16(magnitude, 0, dst + dst_offset + y * dst_stride + x0);
    }
}

// Guide §10.4.2, Figure 10-9: one output pixel per work item.
__kernel void sobel_pixel(__global const uchar* restrict src, uint src_offset, uint src_stride,
                          __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                          uint width, uint height, uint result, uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    sobelPixel(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, x, y,
               result, border, border_value);
}

// Guide §10.4.2-10.4.3, Figure 10-10: 16x1 outputs per work item, (x0, y) =
// (16 * id0, id1).
__kernel void sobel_row16(__global const uchar* restrict src, uint src_offset, uint src_stride,
                          __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                          uint width, uint height, uint result, uint border, uint border_value)
{
    const uint x0 = 16 * get_global_id(0);
    const uint y = get_global_id(1);
    if (x0 >= width || y >= height)
        return;
    if (x0 == 0 || x0 + 17 > width || y == 0 || y + 2 > height) {
        sobelEdgeBlock(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, x0,
                       y, 1, result, border, border_value);
        return;
    }
    __global const uchar* at = src + src_offset + y * src_stride + x0;
    store16(dst, dst_offset, dst_stride, x0, y, rowPass(at - src_stride), rowPass(at),
            rowPass(at + src_stride), result);
}

// Guide §10.4.2-10.4.3, Figure 10-11: 16x2 outputs per work item, (x0, y0) =
// (16 * id0, 2 * id1). The four input rows' passes serve both output rows.
__kernel void sobel_block16x2(__global const uchar* restrict src, uint src_offset, uint src_stride,
                              __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                              uint width, uint height, uint result, uint border, uint border_value)
{
    const uint x0 = 16 * get_global_id(0);
    const uint y0 = 2 * get_global_id(1);
    if (x0 >= width || y0 >= height)
        return;
    if (x0 == 0 || x0 + 17 > width || y0 == 0 || y0 + 3 > height) {
        sobelEdgeBlock(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, x0,
                       y0, 2, result, border, border_value);
        return;
    }
    __global const uchar* at = src + src_offset + y0 * src_stride + x0;
    const RowPass r0 = rowPass(at - src_stride);
    const RowPass r1 = rowPass(at);
    const RowPass r2 = rowPass(at + src_stride);
    const RowPass r3 = rowPass(at + 2 * src_stride);
    store16(dst, dst_offset, dst_stride, x0, y0, r0, r1, r2, result);
    store16(dst, dst_offset, dst_stride, x0, y0 + 1, r1, r2, r3, result);
}

// ---- sobel_aligned16x4: 16 pixels as 16-bit lanes of 32-bit words ------------------
// A row's 16 pixels x0 .. x0 + 15 are two uint4: `even`, word j holding pixels 4j
// (low lane) and 4j + 2 (high lane), and `odd`, word j holding 4j + 1 and 4j + 3. A sum
// stays in its lane as long as every lane of every intermediate lies in [0, 65535]:
// differences carry a bias (255 per row's right - left, 1020 per gradient).

#define BYTE_LANES 0x00ff00ffu   // 255 in each lane; the low byte of each lane
#define LANE_ONES 0x00010001u    // 1 in each lane
#define LANE_SIGNS 0x80008000u   // bit 15 of each lane
#define GRADIENT_BIAS 0x03fc03fcu // 1020 in each lane

// One input row's horizontal passes for 16 outputs, per lane: right - left + 255 in
// [0, 510] and left + 2 centre + right in [0, 1020].
typedef struct {
    uint4 diff_even, diff_odd;
    uint4 smooth_even, smooth_odd;
} LanePass;

// The horizontal passes of a row whose pixels x0 .. x0 + 15 are the bytes of `pixels`
// (little-endian) and whose pixels x0 - 1 and x0 + 16 are `before` and `after`.
LanePass lanePass(uint4 pixels, uint before, uint after)
{
    const uint4 even = pixels & BYTE_LANES;
    const uint4 odd = (pixels >> 8) & BYTE_LANES;
    // Pixels 4j - 1 and 4j + 1 (left of the even ones), 4j + 2 and 4j + 4 (right of the
    // odd ones).
    const uint4 odd_left = (odd << 16) | ((uint4)(before << 16, odd.s012) >> 16);
    const uint4 even_right = (even >> 16) | ((uint4)(even.s123, after) << 16);
    LanePass pass;
    pass.diff_even = odd + BYTE_LANES - odd_left;
    pass.diff_odd = even_right + BYTE_LANES - even;
    pass.smooth_even = odd_left + (even << 1) + odd;
    pass.smooth_odd = even + (odd << 1) + even_right;
    return pass;
}

// The 16 bytes at p (x0's position in its row) as a uint4: one aligned 16-byte load
// where `aligned` says p is a multiple of 16.
uint4 load16(__global const uchar* p, bool aligned)
{
    return aligned ? *(__global const uint4*)p : as_uint4(vload16(0, p));
}

// Stores `bytes` at p: one aligned 16-byte store where `aligned` says p is a multiple
// of 16.
void storeWords16(uint4 bytes, __global uchar* p, bool aligned)
{
    if (aligned)
        *(__global uint4*)p = bytes;
    else
        vstore16(as_uchar16(bytes), 0, p);
}

// The passes of input row y (any y: `border` applies to it and to the pixels x0 - 1
// and x0 + 16) for the outputs x0 .. x0 + 15, x0 + 16 <= width. `inside`: the row and
// those two pixels lie in the image, and no rule is needed.
LanePass lanePassAt(__global const uchar* src, uint src_offset, uint src_stride, int width,
                    int height, int x0, int y, uint border, uint border_value, bool aligned,
                    bool inside)
{
    if (inside) {
        __global const uchar* at = src + src_offset + (uint)y * src_stride + (uint)x0;
        return lanePass(load16(at, aligned), at[-1], at[16]);
    }
    uint4 pixels;
    if (border == FRAMECL_BORDER_CONSTANT && (y < 0 || y >= height))
        pixels = (uint4)(border_value * 0x01010101u);
    else
        pixels = load16(src + src_offset + (uint)framecl_border_index(y, height, border) * src_stride +
                            (uint)x0,
                        aligned);
    const uint before =
        (uint)pixelAt(src, src_offset, src_stride, width, height, x0 - 1, y, border, border_value);
    const uint after =
        (uint)pixelAt(src, src_offset, src_stride, width, height, x0 + 16, y, border, border_value);
    return lanePass(pixels, before, after);
}

// The lanes of gradient + 1020 (in [0, 2040]) as the gradient in two's complement.
uint4 lanesSigned(uint4 biased)
{
    return (biased + (LANE_SIGNS - GRADIENT_BIAS)) ^ LANE_SIGNS;
}

// |g| in each lane of two's complement lanes in -1020 .. 1020.
uint4 lanesAbs(uint4 g)
{
    const uint4 negative = (g >> 15) & LANE_ONES;
    return (g ^ (negative * 0xffffu)) + negative;
}

// magnitudeL2 on 8 pixels, as uints.
uint8 magnitudeL2x8(short8 gx, short8 gy)
{
    const int8 x = convert_int8(gx);
    const int8 y = convert_int8(gy);
    const int8 s = min(x * x + y * y, L2_SATURATED);
    int8 r = convert_int8_rte(sqrt(convert_float8(s)));
    r -= r * r + r < s;
    r += (r > 0) & (r * r - r >= s);
    return convert_uint8(min(r, 255));
}

// The 16 outputs x0 .. x0 + 15 of row y from the passes of the rows above, at and
// below it.
void storeLanes(__global uchar* dst, uint dst_offset, uint dst_stride, uint x0, uint y,
                LanePass above, LanePass at, LanePass below, uint result, bool aligned)
{
    const uint4 gx_even =
        lanesSigned(above.diff_even + (at.diff_even << 1) + below.diff_even);
    const uint4 gx_odd = lanesSigned(above.diff_odd + (at.diff_odd << 1) + below.diff_odd);
    const uint4 gy_even = lanesSigned(below.smooth_even + GRADIENT_BIAS - above.smooth_even);
    const uint4 gy_odd = lanesSigned(below.smooth_odd + GRADIENT_BIAS - above.smooth_odd);
    if (result == RESULT_GX || result == RESULT_GY) {
        // Pixels 4j, 4j + 1 in one word, 4j + 2, 4j + 3 in the next, low byte first.
        const uint4 even = result == RESULT_GX ? gx_even : gy_even;
        const uint4 odd = result == RESULT_GX ? gx_odd : gy_odd;
        const uint4 first = (even & 0xffffu) | (odd << 16);
        const uint4 second = (even >> 16) | (odd & 0xffff0000u);
        __global uchar* out = dst + dst_offset + y * dst_stride + 2 * x0;
        storeWords16((uint4)(first.s0, second.s0, first.s1, second.s1), out, aligned);
        storeWords16((uint4)(first.s2, second.s2, first.s3, second.s3), out + 16, aligned);
        return;
    }
    uint4 even, odd; // magnitudes in [0, 255], in lanes
    if (result == RESULT_L1) {
        even = lanesAbs(gx_even) + lanesAbs(gy_even);
        odd = lanesAbs(gx_odd) + lanesAbs(gy_odd);
        // Saturated to 255: bit 15 of a lane + 0x7f00 is set where the lane is >= 256.
        const uint4 even_over = (((even + 0x7f007f00u) >> 15) & LANE_ONES) * 0xffffu;
        const uint4 odd_over = (((odd + 0x7f007f00u) >> 15) & LANE_ONES) * 0xffffu;
        even = (even & ~even_over) | (even_over & BYTE_LANES);
        odd = (odd & ~odd_over) | (odd_over & BYTE_LANES);
    } else {
        // Pixels 0, 2, .. 14 and 1, 3, .. 15; their magnitudes back into lanes.
        const uint8 r_even = magnitudeL2x8(as_short8(gx_even), as_short8(gy_even));
        const uint8 r_odd = magnitudeL2x8(as_short8(gx_odd), as_short8(gy_odd));
        even = r_even.even | (r_even.odd << 16);
        odd = r_odd.even | (r_odd.odd << 16);
    }
    storeWords16(even | (odd << 8), dst + dst_offset + y * dst_stride + x0, aligned);
}

// `rows` (a constant after inlining) x 16 outputs from (x0, y0): the passes of input rows
// y0 - 1 .. y0 + rows, each computed once, rolling down three at a time. Aligned 16-byte
// loads and stores where the planes allow them (uniform over the dispatch).
inline void sobelLaneBlock(__global const uchar* restrict src, uint src_offset, uint src_stride,
                           __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                           uint width, uint height, uint result, uint border, uint border_value,
                           uint x0, uint y0, const uint rows)
{
    if (x0 >= width || y0 >= height)
        return;
    if (x0 + 16 > width) {
        sobelEdgeBlock(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, x0,
                       y0, rows, result, border, border_value);
        return;
    }
    const bool src_aligned = ((src_offset | src_stride) & 15u) == 0;
    const bool dst_aligned = ((dst_offset | dst_stride) & 15u) == 0;
    const int w = (int)width, h = (int)height;
    // Blocks whose window stays in the image (all but the edges') skip the border rules.
    const bool inside = x0 > 0 && x0 + 17 <= width && y0 > 0 && y0 + rows + 1 <= height;
    LanePass above = lanePassAt(src, src_offset, src_stride, w, h, (int)x0, (int)y0 - 1, border,
                                border_value, src_aligned, inside);
    LanePass at = lanePassAt(src, src_offset, src_stride, w, h, (int)x0, (int)y0, border,
                             border_value, src_aligned, inside);
    // Not unrolled: unrolled, the loop takes more registers and runs slower on a GPU
    // (docs/benchmarks.md, "Choices inside the kernels").
#pragma unroll 1
    for (uint i = 0; i < rows; ++i) {
        const uint y = y0 + i;
        if (y >= height)
            break;
        const LanePass below = lanePassAt(src, src_offset, src_stride, w, h, (int)x0, (int)y + 1,
                                          border, border_value, src_aligned, inside);
        storeLanes(dst, dst_offset, dst_stride, x0, y, above, at, below, result, dst_aligned);
        above = at;
        at = below;
    }
}

// 16x4 outputs per work item, (x0, y0) = (16 * id0, 4 * id1).
__kernel void sobel_aligned16x4(__global const uchar* restrict src, uint src_offset,
                                uint src_stride, __global uchar* restrict dst, uint dst_offset,
                                uint dst_stride, uint width, uint height, uint result,
                                uint border, uint border_value)
{
    sobelLaneBlock(src, src_offset, src_stride, dst, dst_offset, dst_stride, width, height, result,
                   border, border_value, 16 * get_global_id(0), 4 * get_global_id(1), 4);
}

#ifdef __IMAGE_SUPPORT__
// sobel_image: one output per work item, its 3x3 window read from an image (guide
// §6.2): the texture path's cache serves the overlap between neighbouring items, and
// its clamp the replicate border.
int3 imageRow(__read_only image2d_t src, int width, int height, int x, int y, uint border, uint border_value)
{
    return (int3)((int)framecl_read_pixel(src, x - 1, y, width, height, border, border_value),
                  (int)framecl_read_pixel(src, x, y, width, height, border, border_value),
                  (int)framecl_read_pixel(src, x + 1, y, width, height, border, border_value));
}

__kernel void sobel_image(__read_only image2d_t src, __global uchar* restrict dst, uint dst_offset,
                          uint dst_stride, uint width, uint height, uint result, uint border, uint border_value)
{
    const uint x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int w = (int)width, h = (int)height;
    storeGradient(dst, dst_offset, dst_stride, x, y, imageRow(src, w, h, (int)x, (int)y - 1, border, border_value),
                  imageRow(src, w, h, (int)x, (int)y, border, border_value),
                  imageRow(src, w, h, (int)x, (int)y + 1, border, border_value), result);
}
#endif
