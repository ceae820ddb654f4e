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
// Work items of the wide variants whose window leaves the image (the first block of
// each row, blocks that reach the last column, the first and last rows) take the
// one-pixel path for each of their outputs: 9 bytes per output.
// Short vectors hold the sums (§10.4.4: "short type is preferred"): |gx|, |gy| <= 1020.

// `border`: the index of the value in `borders` of plugins/sobel/sobel.cpp.
#define BORDER_REPLICATE 0u
#define BORDER_REFLECT101 1u
#define BORDER_CONSTANT 2u

// `result` (plugins/sobel/sobel.cpp, enum Result).
#define RESULT_GX 0u
#define RESULT_GY 1u
#define RESULT_L1 2u
#define RESULT_L2 3u

// 255.5² = 65280.25: a larger sum of squares rounds to 256 or more, saturated to 255.
#define L2_SATURATED 65281

// The index inside [0, size) that stands for i in [-1, size] (a 3x3 window reaches
// one pixel past each edge) under replicate (aaa|abcd|ddd) or reflect101
// (cb|abcd|cb; a one-pixel image reflects onto itself).
int borderIndex(int i, int size, uint border)
{
    if (i < 0)
        return border == BORDER_REPLICATE ? 0 : min(1, size - 1);
    if (i >= size)
        return border == BORDER_REPLICATE ? size - 1 : max(size - 2, 0);
    return i;
}

int pixelAt(__global const uchar* src, uint src_offset, uint src_stride, int width, int height,
            int x, int y, uint border, uint border_value)
{
    if (border == BORDER_CONSTANT && (x < 0 || x >= width || y < 0 || y >= height))
        return (int)border_value;
    const uint row = (uint)borderIndex(y, height, border);
    const uint column = (uint)borderIndex(x, width, border);
    return src[src_offset + row * src_stride + column];
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
