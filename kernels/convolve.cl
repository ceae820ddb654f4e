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
