// Bicubic scaling (guide §9.3.4), as docs/filters.md specifies it: an R8 or ABGR8888
// frame of in_width x in_height resampled to out_width x out_height.
//
// Output pixel (X, Y) samples the input at x = (X + 0.5) in_width / out_width, and y
// likewise, in the guide's coordinates (pixel centres at +0.5). With fx = x - 0.5, the
// guide's taps are columns x0 = floor(x - 1.5) = floor(fx) - 1 .. x0 + 3 and its
// fraction t = frac(x - 0.5) = fx - floor(fx); the weights are Keys' cubic of
// coefficient `a` at the taps' distances 1 + t, t, 1 - t, 2 - t (weights(), below;
// a = -0.5 gives the guide's w_u0 .. w_u3). Rows likewise. The output is the weighted
// sum of the 4x4 taps per channel (alpha included), floor(v + 0.5) saturated to
// 0..255. Taps outside the input follow `border`.
//
// Each work item computes its columns' first tap and fraction in 32-bit integers
// (tapsOf), exactly, whatever the size; only the weights and the sums are float, so
// every kernel is within ±1 of the double-precision reference
// (daemon/reference/reference_bicubic.hpp), and equal to it where t = 0 (every tap
// weight 0 but one of 1: scaling to the same size returns the input).
//
// Three variants (plugins/bicubic/bicubic.cpp chooses); bytes per output pixel:
//   pixel  bicubic_pixel_*: one output pixel per work item, its 16 taps each mapped
//          through the border rule and loaded on their own, its weights computed per
//          pixel. The guide's formula as written. Reads 16 pixels, writes 1.
//   strip  bicubic_strip_*: a strip of STRIP_ROWS output rows per work item, 4 columns
//          wide for R8 and 1 for ABGR8888, so that every work item stores 4 bytes per
//          output row with one vstore4 (guide §10.2.2). The filter is separable: each
//          input row's horizontal pass (4 taps per column) is computed once and kept
//          in a sliding window of 4 rows that the strip's output rows share (guide
//          §10.4.1's reuse of row passes); the column taps and weights are computed
//          once per work item, the row weights once per output row. An input row's
//          taps are one vector load where they lie inside the input: R8 a vload8
//          holding the 4 columns' taps when they fit in 8 bytes (any upscale, and
//          downscales to 3/4), else a vload4 per column; ABGR8888 one vload16 (guide
//          §10.2.2, §10.4.3). Work items whose taps leave the input map each tap
//          through the border rule instead. A strip needs about STRIP_ROWS / s + 3
//          input rows, s = out_height / in_height, so it reads 4 (STRIP_ROWS / s + 3) /
//          STRIP_ROWS taps per output pixel: 4.2 at s = 1.5 and 8.5 at s = 0.5, against
//          16; at s = 1.5 an R8 strip issues 1.04 vload8 per 4 outputs where `pixel`
//          issues 64 byte loads. Writes 1 pixel per output pixel.
//   image  bicubic_image_*: pixel with the input read from an image (guide §6.2), at
//          the end of this file.
// The registers a strip holds do not grow with STRIP_ROWS (its rows are a loop over a
// 4-row window), so it does not run into the register spilling that guide §10.3.4
// saw when a work item took more outputs.

// Border rules: framecl_border_index and FRAMECL_BORDER_* (kernels/prelude.cl, which the
// daemon builds in front of this file).

// Output rows per work item of the strip kernels (plugins/bicubic/bicubic.cpp's
// strip_rows).
#define STRIP_ROWS 8

// The first tap (floor(fx) - 1) and the fraction t = frac(fx) of output coordinate `o`
// of an axis scaled from in_size to out_size, where fx = (o + 0.5) in_size / out_size
// - 0.5 = ((2o + 1) in_size - out_size) / (2 out_size). The numerator plus one
// denominator, n = (2o + 1) in_size + out_size, is never negative, so unsigned division
// floors it: floor(fx) = n / (2 out_size) - 1 and t = (n mod 2 out_size) / (2 out_size),
// the only rounding being t's. n < 2^32 because the plugin takes out_size <= 16384 and
// in_size <= 65536.
typedef struct {
    int first;
    float t;
} Taps;

Taps tapsOf(uint o, uint in_size, uint out_size)
{
    const uint denominator = 2 * out_size;
    const uint n = (2 * o + 1) * in_size + out_size;
    Taps taps;
    taps.first = (int)(n / denominator) - 2;
    taps.t = (float)(n % denominator) / (float)denominator;
    return taps;
}

// Keys' cubic W of coefficient a at the taps' distances 1 + t, t, 1 - t, 2 - t:
//   W(d) = (a + 2) d³ - (a + 3) d² + 1           for d <= 1
//   W(d) = a d³ - 5a d² + 8a d - 4a              for 1 < d < 2
// which, with s = 1 - t, are a t s², W(t), W(s) and a t² s. At t = 0: 0, 1, 0, 0.
float4 weights(float t, float a)
{
    const float s = 1.0f - t;
    return (float4)(a * t * s * s, ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f,
                    ((a + 2.0f) * s - (a + 3.0f)) * s * s + 1.0f, a * t * t * s);
}

// Input pixel (column, row), both inside the input, as floats: R8's value, or ABGR8888's
// channels. Where the daemon fuses the stages before this one into its loads
// (docs/architecture.md, "Fusion"), it is their output there, computed from the run's
// input; every kernel but the image ones reads through these two, and the vector loads
// of the strip kernels give way to them in such a program.
float inputR8(__global const uchar* src, uint src_offset, uint src_stride, int column,
              int row FRAMECL_FUSED_PARAMS)
{
#if FRAMECL_FUSED_INPUT
    return (float)framecl_fused_input(src, src_offset, src_stride FRAMECL_FUSED_ARGS, column, row).x;
#else
    return (float)src[src_offset + (uint)row * src_stride + (uint)column];
#endif
}

float4 inputAbgr(__global const uchar* src, uint src_offset, uint src_stride, int column,
                 int row FRAMECL_FUSED_PARAMS)
{
#if FRAMECL_FUSED_INPUT
    return convert_float4(framecl_fused_input(src, src_offset, src_stride FRAMECL_FUSED_ARGS, column, row));
#else
    return convert_float4(vload4((uint)column, src + src_offset + (uint)row * src_stride));
#endif
}

// The columns that the taps first .. first + 3 stand for under `border` (-1: the border
// value).
int4 tapColumns(int first, uint width, uint border)
{
    return (int4)(framecl_border_index(first, (int)width, border),
                  framecl_border_index(first + 1, (int)width, border),
                  framecl_border_index(first + 2, (int)width, border),
                  framecl_border_index(first + 3, (int)width, border));
}

// R8: the taps of `columns` in input row `row` (from framecl_border_index: -1 is a row of
// the constant border), the border value where a column or the row is -1.
float4 gatherR8(__global const uchar* src, uint src_offset, uint src_stride, int row, int4 columns,
                float border_value FRAMECL_FUSED_PARAMS)
{
    if (row < 0) return (float4)(border_value);
    return (float4)(columns.x < 0 ? border_value : inputR8(src, src_offset, src_stride, columns.x, row FRAMECL_FUSED_ARGS),
                    columns.y < 0 ? border_value : inputR8(src, src_offset, src_stride, columns.y, row FRAMECL_FUSED_ARGS),
                    columns.z < 0 ? border_value : inputR8(src, src_offset, src_stride, columns.z, row FRAMECL_FUSED_ARGS),
                    columns.w < 0 ? border_value : inputR8(src, src_offset, src_stride, columns.w, row FRAMECL_FUSED_ARGS));
}

// ABGR8888: pixel `column` of input row `row`, or the border value in every channel.
float4 pixelAbgr(__global const uchar* src, uint src_offset, uint src_stride, int column, int row,
                 float border_value FRAMECL_FUSED_PARAMS)
{
    return column < 0 || row < 0 ? (float4)(border_value)
                                 : inputAbgr(src, src_offset, src_stride, column, row FRAMECL_FUSED_ARGS);
}

// The horizontal pass of ABGR8888 input row `row` over `columns` with weights `w`, per
// channel.
float4 rowPassAbgr(__global const uchar* src, uint src_offset, uint src_stride, int row, int4 columns,
                   float4 w, float border_value FRAMECL_FUSED_PARAMS)
{
    return w.x * pixelAbgr(src, src_offset, src_stride, columns.x, row, border_value FRAMECL_FUSED_ARGS) +
           w.y * pixelAbgr(src, src_offset, src_stride, columns.y, row, border_value FRAMECL_FUSED_ARGS) +
           w.z * pixelAbgr(src, src_offset, src_stride, columns.z, row, border_value FRAMECL_FUSED_ARGS) +
           w.w * pixelAbgr(src, src_offset, src_stride, columns.w, row, border_value FRAMECL_FUSED_ARGS);
}

// Rounded to nearest, halves up, and saturated (NaN cannot occur: the weights are finite).
uchar toPixel(float v)
{
    return convert_uchar_sat(floor(v + 0.5f));
}

uchar4 toPixel4(float4 v)
{
    return convert_uchar4_sat(floor(v + 0.5f));
}

// ---- pixel: one output pixel per work item ----------------------------------------

// Reads 16 bytes, writes 1 per output pixel.
#if FRAMECL_KERNEL_WANTED(bicubic_pixel_r8)
__kernel void bicubic_pixel_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                               uint in_width, uint in_height, uint out_width, uint out_height,
                               float a, uint border, uint border_value FRAMECL_FUSED_PARAMS)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= out_width || y >= out_height) return;
    const Taps tx = tapsOf(x, in_width, out_width);
    const Taps ty = tapsOf(y, in_height, out_height);
    const float4 wx = weights(tx.t, a);
    const float4 wy = weights(ty.t, a);
    const int4 columns = tapColumns(tx.first, in_width, border);
    const float outside = (float)border_value;
    float sum = 0.0f;
    for (int j = 0; j < 4; ++j) {
        const int row = framecl_border_index(ty.first + j, (int)in_height, border);
        const float pass =
            row < 0 ? outside : dot(gatherR8(src, src_offset, src_stride, row, columns, outside FRAMECL_FUSED_ARGS), wx);
        sum += (j == 0 ? wy.x : j == 1 ? wy.y : j == 2 ? wy.z : wy.w) * pass;
    }
    dst[dst_offset + y * dst_stride + x] = toPixel(sum);
}
#endif

// Reads 16 pixels (64 bytes), writes 4 bytes per output pixel.
#if FRAMECL_KERNEL_WANTED(bicubic_pixel_abgr)
__kernel void bicubic_pixel_abgr(__global const uchar* restrict src, uint src_offset,
                                 uint src_stride, __global uchar* restrict dst, uint dst_offset,
                                 uint dst_stride, uint in_width, uint in_height, uint out_width,
                                 uint out_height, float a, uint border, uint border_value FRAMECL_FUSED_PARAMS)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= out_width || y >= out_height) return;
    const Taps tx = tapsOf(x, in_width, out_width);
    const Taps ty = tapsOf(y, in_height, out_height);
    const float4 wx = weights(tx.t, a);
    const float4 wy = weights(ty.t, a);
    const int4 columns = tapColumns(tx.first, in_width, border);
    const float outside = (float)border_value;
    float4 sum = 0.0f;
    for (int j = 0; j < 4; ++j) {
        const int row = framecl_border_index(ty.first + j, (int)in_height, border);
        const float4 pass = row < 0 ? (float4)(outside)
                                    : rowPassAbgr(src, src_offset, src_stride, row, columns, wx,
                                                  outside FRAMECL_FUSED_ARGS);
        sum += (j == 0 ? wy.x : j == 1 ? wy.y : j == 2 ? wy.z : wy.w) * pass;
    }
    vstore4(toPixel4(sum), x, dst + dst_offset + y * dst_stride);
}
#endif

// ---- strip: STRIP_ROWS output rows per work item, input row passes shared ----------

// How a strip work item loads an input row's taps (the same for all its rows).
#define LOAD_PACKED 0u // R8: one vload8 holds the 4 columns' taps
#define LOAD_VECTOR 1u // a vector load per column (R8: vload4; ABGR8888: vload16)
#define LOAD_BORDER 2u // some tap lies outside the input: each mapped on its own

// What an R8 strip work item knows of its 4 columns: their taps' columns in the input
// and the weights of each.
typedef struct {
    uint load;
    int first;       // column x0's first tap
    uint4 shifts;    // LOAD_PACKED: 8 x (each column's first tap - first)
    int4 firsts;     // LOAD_VECTOR: each column's first tap
    int4 columns[4]; // LOAD_BORDER: each column's taps, border-mapped
    float4 w[4];     // each column's 4 weights
} ColumnsR8;

// The horizontal pass of input row `row` (-1: a row of the constant border) for an R8
// strip's 4 columns.
float4 rowPassR8(__global const uchar* src, uint src_offset, uint src_stride, int row, const ColumnsR8* c,
                 float border_value FRAMECL_FUSED_PARAMS)
{
    if (row < 0) return (float4)(border_value);
    float4 taps[4];
#if !FRAMECL_FUSED_INPUT
    __global const uchar* pixels = src + src_offset + (uint)row * src_stride;
    if (c->load == LOAD_PACKED) {
        const ulong bytes = as_ulong(vload8(0, pixels + c->first));
        taps[0] = convert_float4(as_uchar4((uint)(bytes >> c->shifts.x)));
        taps[1] = convert_float4(as_uchar4((uint)(bytes >> c->shifts.y)));
        taps[2] = convert_float4(as_uchar4((uint)(bytes >> c->shifts.z)));
        taps[3] = convert_float4(as_uchar4((uint)(bytes >> c->shifts.w)));
    } else if (c->load == LOAD_VECTOR) {
        taps[0] = convert_float4(vload4(0, pixels + c->firsts.x));
        taps[1] = convert_float4(vload4(0, pixels + c->firsts.y));
        taps[2] = convert_float4(vload4(0, pixels + c->firsts.z));
        taps[3] = convert_float4(vload4(0, pixels + c->firsts.w));
    } else
#endif
    {
        for (int k = 0; k < 4; ++k)
            taps[k] = gatherR8(src, src_offset, src_stride, row, c->columns[k], border_value FRAMECL_FUSED_ARGS);
    }
    return (float4)(dot(taps[0], c->w[0]), dot(taps[1], c->w[1]), dot(taps[2], c->w[2]),
                    dot(taps[3], c->w[3]));
}

// R8: outputs x0 .. x0 + 3 of rows y0 .. y0 + STRIP_ROWS - 1, (x0, y0) =
// (4 id0, STRIP_ROWS id1); those past the frame's right or bottom edge are not written.
// Reads 4 (STRIP_ROWS / s + 3) / STRIP_ROWS bytes per output pixel, writes 1 (header).
#if FRAMECL_KERNEL_WANTED(bicubic_strip_r8)
__kernel void bicubic_strip_r8(__global const uchar* restrict src, uint src_offset, uint src_stride,
                               __global uchar* restrict dst, uint dst_offset, uint dst_stride,
                               uint in_width, uint in_height, uint out_width, uint out_height,
                               float a, uint border, uint border_value FRAMECL_FUSED_PARAMS)
{
    const uint x0 = 4 * get_global_id(0);
    const uint y0 = STRIP_ROWS * get_global_id(1);
    if (x0 >= out_width || y0 >= out_height) return;

    // Columns past the right edge repeat the last one: computed, never stored.
    ColumnsR8 c;
    int firsts[4];
    for (int k = 0; k < 4; ++k) {
        const Taps tx = tapsOf(min(x0 + k, out_width - 1), in_width, out_width);
        firsts[k] = tx.first;
        c.w[k] = weights(tx.t, a);
        c.columns[k] = tapColumns(tx.first, in_width, border);
    }
    c.first = firsts[0];
    c.firsts = (int4)(firsts[0], firsts[1], firsts[2], firsts[3]);
    c.shifts = 8 * convert_uint4(c.firsts - firsts[0]);
    // The first taps rise with the column, so the 4 columns' taps span firsts[0] ..
    // firsts[3] + 3: inside the input, and within the 8 bytes from firsts[0] when the
    // last column's first tap is at most 4 further.
    const bool inside = firsts[0] >= 0 && firsts[3] + 4 <= (int)in_width;
#ifdef __ENDIAN_LITTLE__
    const bool packed = firsts[3] - firsts[0] <= 4 && firsts[0] + 8 <= (int)in_width;
    c.load = !inside ? LOAD_BORDER : packed ? LOAD_PACKED : LOAD_VECTOR;
#else
    // LOAD_PACKED reads the bytes of a ulong in memory order: little-endian devices
    // only (every GPU framecl targets; OpenCL C defines __ENDIAN_LITTLE__ on them).
    c.load = !inside ? LOAD_BORDER : LOAD_VECTOR;
#endif

    const float outside = (float)border_value;
    const uint y_end = min(y0 + STRIP_ROWS, out_height);
    // window[0..3]: the passes of input rows top .. top + 3. The first output row's
    // taps start at least 4 rows past top - 4, so the loop below fills the window.
    int top = tapsOf(y0, in_height, out_height).first - 4;
    float4 window0 = 0.0f, window1 = 0.0f, window2 = 0.0f, window3 = 0.0f;
    __global uchar* out = dst + dst_offset + y0 * dst_stride + x0;
    for (uint y = y0; y < y_end; ++y, out += dst_stride) {
        const Taps ty = tapsOf(y, in_height, out_height);
        // Slide the window down to ty.first: a row at a time, recomputing at most 4
        // (a downscale may skip rows; the skipped ones are never computed).
        if (ty.first - top > 4) top = ty.first - 4;
        for (; top < ty.first; ++top) {
            window0 = window1;
            window1 = window2;
            window2 = window3;
            window3 = rowPassR8(src, src_offset, src_stride,
                                framecl_border_index(top + 4, (int)in_height, border), &c,
                                outside FRAMECL_FUSED_ARGS);
        }
        const float4 wy = weights(ty.t, a);
        const uchar4 pixels =
            toPixel4(wy.x * window0 + wy.y * window1 + wy.z * window2 + wy.w * window3);
        if (x0 + 4 <= out_width) {
            vstore4(pixels, 0, out);
        } else {
            out[0] = pixels.x;
            if (x0 + 1 < out_width) out[1] = pixels.y;
            if (x0 + 2 < out_width) out[2] = pixels.z;
        }
    }
}
#endif

// ABGR8888: output column x of rows y0 .. y0 + STRIP_ROWS - 1, (x, y0) =
// (id0, STRIP_ROWS id1). An input row's 4 taps are one vload16 where they lie inside.
// Reads 4 (STRIP_ROWS / s + 3) / STRIP_ROWS pixels per output pixel, writes 1 (header).
#if FRAMECL_KERNEL_WANTED(bicubic_strip_abgr)
__kernel void bicubic_strip_abgr(__global const uchar* restrict src, uint src_offset,
                                 uint src_stride, __global uchar* restrict dst, uint dst_offset,
                                 uint dst_stride, uint in_width, uint in_height, uint out_width,
                                 uint out_height, float a, uint border, uint border_value FRAMECL_FUSED_PARAMS)
{
    const uint x = get_global_id(0);
    const uint y0 = STRIP_ROWS * get_global_id(1);
    if (x >= out_width || y0 >= out_height) return;

    const Taps tx = tapsOf(x, in_width, out_width);
    const float4 wx = weights(tx.t, a);
    const int4 columns = tapColumns(tx.first, in_width, border);
    const bool inside = tx.first >= 0 && tx.first + 4 <= (int)in_width;
    const float outside = (float)border_value;

    const uint y_end = min(y0 + STRIP_ROWS, out_height);
    int top = tapsOf(y0, in_height, out_height).first - 4;
    float4 window0 = 0.0f, window1 = 0.0f, window2 = 0.0f, window3 = 0.0f;
    __global uchar* out = dst + dst_offset + y0 * dst_stride;
    for (uint y = y0; y < y_end; ++y, out += dst_stride) {
        const Taps ty = tapsOf(y, in_height, out_height);
        if (ty.first - top > 4) top = ty.first - 4;
        for (; top < ty.first; ++top) {
            window0 = window1;
            window1 = window2;
            window2 = window3;
            const int row = framecl_border_index(top + 4, (int)in_height, border);
            if (row < 0) {
                window3 = (float4)(outside);
#if !FRAMECL_FUSED_INPUT
            } else if (inside) {
                // The same sum as rowPassAbgr's, in the same order, from one load.
                const float16 taps = convert_float16(vload16(0, src + src_offset + (uint)row * src_stride + 4 * tx.first));
                window3 =
                    wx.x * taps.s0123 + wx.y * taps.s4567 + wx.z * taps.s89ab + wx.w * taps.scdef;
#endif
            } else {
                window3 = rowPassAbgr(src, src_offset, src_stride, row, columns, wx, outside FRAMECL_FUSED_ARGS);
            }
        }
        const float4 wy = weights(ty.t, a);
        vstore4(toPixel4(wy.x * window0 + wy.y * window1 + wy.z * window2 + wy.w * window3), x,
                out);
    }
}
#endif

// ---- image: pixel's one output per work item, its taps read from an image ------------

#if defined(__IMAGE_SUPPORT__) && !FRAMECL_FUSED_BUILD
// Guide §6.2: the texture path maps each tap's coordinates (the sampler's clamp is the
// replicate border) and its cache serves the taps neighbouring outputs share. The taps
// are read nearest, not filtered, so the result is pixel's. Reads 16 texels, writes 1
// pixel per output pixel.
__kernel void bicubic_image_r8(__read_only image2d_t src, __global uchar* restrict dst, uint dst_offset,
                               uint dst_stride, uint in_width, uint in_height, uint out_width, uint out_height,
                               float a, uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= out_width || y >= out_height) return;
    const Taps tx = tapsOf(x, in_width, out_width);
    const Taps ty = tapsOf(y, in_height, out_height);
    const float4 wx = weights(tx.t, a);
    const float4 wy = weights(ty.t, a);
    float sum = 0.0f;
    for (int j = 0; j < 4; ++j) {
        const int row = ty.first + j;
        float4 taps;
        for (int i = 0; i < 4; ++i)
            taps[i] = framecl_read_pixel(src, tx.first + i, row, in_width, in_height, border, border_value);
        sum += (j == 0 ? wy.x : j == 1 ? wy.y : j == 2 ? wy.z : wy.w) * dot(taps, wx);
    }
    dst[dst_offset + y * dst_stride + x] = toPixel(sum);
}

__kernel void bicubic_image_abgr(__read_only image2d_t src, __global uchar* restrict dst, uint dst_offset,
                                 uint dst_stride, uint in_width, uint in_height, uint out_width, uint out_height,
                                 float a, uint border, uint border_value)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= out_width || y >= out_height) return;
    const Taps tx = tapsOf(x, in_width, out_width);
    const Taps ty = tapsOf(y, in_height, out_height);
    const float4 wx = weights(tx.t, a);
    const float4 wy = weights(ty.t, a);
    float4 sum = 0.0f;
    for (int j = 0; j < 4; ++j) {
        const int row = ty.first + j;
        float4 pass = 0.0f;
        for (int i = 0; i < 4; ++i)
            pass += wx[i] * convert_float4(framecl_read_pixel4(src, tx.first + i, row, in_width, in_height, border,
                                                               border_value));
        sum += (j == 0 ? wy.x : j == 1 ? wy.y : j == 2 ? wy.z : wy.w) * pass;
    }
    vstore4(toPixel4(sum), x, dst + dst_offset + y * dst_stride);
}
#endif
