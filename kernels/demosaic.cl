// Demosaicing: a Bayer plane with one sample per byte or 16-bit word to ABGR16161616
// (docs/filters.md, "`demosaic`: Bayer to RGB"). Each 2x2 block of the pattern, whose four
// pixels are one of each site: R, B, and the two G (one in R's row, one in B's), is
// computed at once from the 6x6 samples around it.
//
// Samples outside the plane are reflect101's (cb|abcd|cb), which keeps the pattern's
// colour at every position: the plane's sides are even. Every sum is of integers, so
// the GPU and the CPU reference agree exactly. Each output channel c of `bits` bits is
// widened to 16 by repeating its high bits below it, (c << (16 - bits)) | (c >> (2 bits
// - 16)), so that the largest code becomes 65535; alpha is 65535.
//
// The stage's parameter block holds four uints: red_x and red_y (R's place in the 2x2
// block of the pattern), max_code (the largest code; a word's bits above it are ignored)
// and bits.
//
//   bilinear  OpenCV's bilinear (COLOR_Bayer*2BGR): a missing G is (N + S + W + E + 2) >> 2,
//             a missing R or B (N + S + 1) >> 1, (W + E + 1) >> 1 or the four diagonals'
//             (sum + 2) >> 2.
//   mhc       Malvar, He and Cutler's gradient-corrected linear filters (ICASSP 2004), 5x5,
//             weights in sixteenths: (sum + 8) >> 4, clamped to [0, max_code].
//
// demosaic_<method>_<packing>_block: the four output pixels of the block at (x, y), with
// the signature of a stencil that begins a fused run (include/framecl/plugin.h,
// framecl_pointwise, reads_input; block 2x2). demosaic_<method>_<packing>: the kernel, one
// work item per block, which calls it and stores, so a fused run gives the kernel's bytes.
// Every name here starts with demosaic_ or DEMOSAIC_: a fused run's kernel files share
// one program.

// The pixel of `rgb`, each channel widened to 16 bits, alpha 65535. rgb is in [0, max_code].
static inline uint4 demosaic_widen(int3 rgb, uint bits)
{
    const uint3 c = convert_uint3(rgb);
    return (uint4)(c << (16u - bits) | c >> (2u * bits - 16u), 65535u);
}

// One 8-byte store where the output's offset and stride are multiples of 8, else byte
// by byte.
static inline void demosaic_store(__global uchar* row, int x, uint4 pixel, bool aligned)
{
    const ushort4 p = convert_ushort4(pixel);
    if (aligned)
        *(__global ushort4*)(row + 8 * x) = p;
    else
        vstore8(as_uchar8(p), 0, row + 8 * x);
}

// The three channels at site (x, y) from its neighbourhood S(dx, dy). A site is R
// (is_red), B (is_blue) or G, whose horizontal neighbours are R where red_row.
#define DEMOSAIC_BILINEAR(S, is_red, is_blue, red_row, out)                                       \
    do {                                                                                         \
        const int centre = S(0, 0);                                                              \
        if (is_red || is_blue) {                                                                 \
            const int g = (S(-1, 0) + S(1, 0) + S(0, -1) + S(0, 1) + 2) >> 2;                    \
            const int other = (S(-1, -1) + S(1, -1) + S(-1, 1) + S(1, 1) + 2) >> 2;              \
            out = is_red ? (int3)(centre, g, other) : (int3)(other, g, centre);                  \
        } else {                                                                                 \
            const int across = (S(-1, 0) + S(1, 0) + 1) >> 1;                                    \
            const int down = (S(0, -1) + S(0, 1) + 1) >> 1;                                      \
            out = red_row ? (int3)(across, centre, down) : (int3)(down, centre, across);         \
        }                                                                                        \
    } while (0)

#define DEMOSAIC_MHC(S, is_red, is_blue, red_row, max_code, out)                                                   \
    do {                                                                                                          \
        const int centre = S(0, 0);                                                                               \
        const int cross = S(-1, 0) + S(1, 0) + S(0, -1) + S(0, 1);                                                \
        const int diagonals = S(-1, -1) + S(1, -1) + S(-1, 1) + S(1, 1);                                          \
        const int far_across = S(-2, 0) + S(2, 0);                                                                \
        const int far_down = S(0, -2) + S(0, 2);                                                                  \
        int3 sums;                                                                                                \
        if (is_red || is_blue) {                                                                                  \
            const int g = 8 * centre + 4 * cross - 2 * (far_across + far_down);                                  \
            const int other = 12 * centre + 4 * diagonals - 3 * (far_across + far_down);                         \
            sums = is_red ? (int3)(16 * centre, g, other) : (int3)(other, g, 16 * centre);                       \
        } else {                                                                                                  \
            const int across = 10 * centre + 8 * (S(-1, 0) + S(1, 0)) - 2 * diagonals - 2 * far_across + far_down; \
            const int down = 10 * centre + 8 * (S(0, -1) + S(0, 1)) - 2 * diagonals - 2 * far_down + far_across;   \
            sums = red_row ? (int3)(across, 16 * centre, down) : (int3)(down, 16 * centre, across);               \
        }                                                                                                         \
        out = clamp((sums + 8) >> 4, 0, (int)(max_code));                                                        \
    } while (0)

// Six samples of a row from column x0 (even) on, with vector loads: words with one
// 12-byte load where `aligned` says the input's offset and stride are multiples of 4, else
// byte by byte, which any offset and stride will do.
static inline void demosaic_row_bytes(__global const uchar* row, int x0, uint max_code, bool aligned, int* out)
{
    const uchar4 a = vload4(0, row + x0);
    const uchar2 b = vload2(0, row + x0 + 4);
    out[0] = a.s0, out[1] = a.s1, out[2] = a.s2, out[3] = a.s3, out[4] = b.s0, out[5] = b.s1;
}

static inline void demosaic_row_words(__global const uchar* row, int x0, uint max_code, bool aligned, int* out)
{
    if (aligned) {
        const uint3 w = vload3(0, (__global const uint*)(row + 2 * x0));
        out[0] = (int)(w.x & max_code), out[1] = (int)(w.x >> 16 & max_code);
        out[2] = (int)(w.y & max_code), out[3] = (int)(w.y >> 16 & max_code);
        out[4] = (int)(w.z & max_code), out[5] = (int)(w.z >> 16 & max_code);
        return;
    }
    const uchar8 a = vload8(0, row + 2 * x0);
    const uchar4 b = vload4(0, row + 2 * x0 + 8);
    out[0] = (int)(((uint)a.s0 | (uint)a.s1 << 8) & max_code);
    out[1] = (int)(((uint)a.s2 | (uint)a.s3 << 8) & max_code);
    out[2] = (int)(((uint)a.s4 | (uint)a.s5 << 8) & max_code);
    out[3] = (int)(((uint)a.s6 | (uint)a.s7 << 8) & max_code);
    out[4] = (int)(((uint)b.s0 | (uint)b.s1 << 8) & max_code);
    out[5] = (int)(((uint)b.s2 | (uint)b.s3 << 8) & max_code);
}

// The six samples of `row` at columns xs, reflected into the plane.
static inline void demosaic_reflected_bytes(__global const uchar* row, const int* xs, uint max_code, int* out)
{
    out[0] = row[xs[0]], out[1] = row[xs[1]], out[2] = row[xs[2]];
    out[3] = row[xs[3]], out[4] = row[xs[4]], out[5] = row[xs[5]];
}

static inline int demosaic_word(__global const uchar* row, int x, uint max_code)
{
    const uchar2 b = vload2(0, row + 2 * x);
    return (int)(((uint)b.x | (uint)b.y << 8) & max_code);
}

static inline void demosaic_reflected_words(__global const uchar* row, const int* xs, uint max_code, int* out)
{
    out[0] = demosaic_word(row, xs[0], max_code), out[1] = demosaic_word(row, xs[1], max_code);
    out[2] = demosaic_word(row, xs[2], max_code), out[3] = demosaic_word(row, xs[3], max_code);
    out[4] = demosaic_word(row, xs[4], max_code), out[5] = demosaic_word(row, xs[5], max_code);
}

#define DEMOSAIC_REFLECT(i, size) framecl_border_index(i, (int)(size), FRAMECL_BORDER_REFLECT101)
#define DEMOSAIC_ROW_INSIDE(r, packing)                                                                            \
    demosaic_row_##packing(plane + (y0 + r) * in0_stride, x0, max_code, aligned, window[r]);
#define DEMOSAIC_ROW_REFLECTED(r, packing)                                                                         \
    demosaic_reflected_##packing(plane + DEMOSAIC_REFLECT(y0 + r, height) * in0_stride, xs, max_code, window[r]);
#define DEMOSAIC_ROWS(ROW, packing)                                                                                \
    ROW(0, packing) ROW(1, packing) ROW(2, packing) ROW(3, packing) ROW(4, packing) ROW(5, packing)

// One pixel of the block: (PX, PY) within it. px and py are constants, so that every
// DEMOSAIC_S_WINDOW is a fixed element of the window, which stays in registers.
#define DEMOSAIC_PIXEL(PX, PY, BODY)                                                                               \
    {                                                                                                              \
        const int px = PX, py = PY;                                                                                \
        const bool is_red = px == (int)red_x && py == (int)red_y;                                                  \
        const bool is_blue = px != (int)red_x && py != (int)red_y;                                                 \
        const bool red_row = py == (int)red_y;                                                                     \
        int3 rgb;                                                                                                  \
        BODY;                                                                                                      \
        pixels[2 * PY + PX] = demosaic_widen(rgb, bits);                                                           \
    }

// The block function (framecl_pointwise, reads_input): pixels[0..3] are the output at
// (x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1); x and y are even. in1 is plane 0 again
// and unused. The 6x6 samples around the block, rows y - 2 to y + 3 and columns x - 2 to
// x + 3, are read once for its four pixels (a 5x5 window each): each row with vector
// loads where the window lies inside the plane, else sample by sample, reflected.
// Always inlined, so that `window` and `pixels` stay in registers.
#define DEMOSAIC_BLOCK(method, packing, BODY)                                                                      \
    static inline __attribute__((always_inline)) void demosaic_##method##_##packing##_block(                      \
        __global const uchar* in0, uint in0_offset, uint in0_stride, __global const uchar* in1, uint in1_offset,  \
        uint in1_stride, uint width, uint height, uint x, uint y, __private uint4* pixels,                        \
        __global const uchar* params)                                                                            \
    {                                                                                                            \
        const uint4 words = vload4(0, (__global const uint*)params);                                             \
        const uint red_x = words.s0, red_y = words.s1, max_code = words.s2, bits = words.s3;                     \
        __global const uchar* plane = in0 + in0_offset;                                                          \
        const int x0 = (int)x - 2, y0 = (int)y - 2;                                                              \
        int window[6][6];                                                                                        \
        if (x0 >= 0 && y0 >= 0 && x0 + 6 <= (int)width && y0 + 6 <= (int)height) {                              \
            const bool aligned = ((in0_offset | in0_stride) & 3u) == 0;                                          \
            DEMOSAIC_ROWS(DEMOSAIC_ROW_INSIDE, packing)                                                          \
        } else {                                                                                                 \
            const int xs[6] = {DEMOSAIC_REFLECT(x0, width),     DEMOSAIC_REFLECT(x0 + 1, width),                 \
                               DEMOSAIC_REFLECT(x0 + 2, width), DEMOSAIC_REFLECT(x0 + 3, width),                 \
                               DEMOSAIC_REFLECT(x0 + 4, width), DEMOSAIC_REFLECT(x0 + 5, width)};                \
            DEMOSAIC_ROWS(DEMOSAIC_ROW_REFLECTED, packing)                                                       \
        }                                                                                                        \
        DEMOSAIC_PIXEL(0, 0, BODY)                                                                               \
        DEMOSAIC_PIXEL(1, 0, BODY)                                                                               \
        DEMOSAIC_PIXEL(0, 1, BODY)                                                                               \
        DEMOSAIC_PIXEL(1, 1, BODY)                                                                               \
    }

// src plane, dst plane, width, height, params (the parameter block): one work item per
// 2x2 block, its four pixels from the block function, stored as aligned 8-byte stores
// where the output's offset and stride are multiples of 8, else byte by byte.
#define DEMOSAIC_KERNEL(method, packing)                                                                          \
    __kernel void demosaic_##method##_##packing(__global const uchar* restrict src, uint src_offset,             \
                                                uint src_stride, __global uchar* restrict dst, uint dst_offset,  \
                                                uint dst_stride, uint width, uint height,                        \
                                                __global const uchar* restrict params)                           \
    {                                                                                                            \
        const int bx = get_global_id(0);                                                                         \
        const int by = get_global_id(1);                                                                         \
        if (bx >= (int)width / 2 || by >= (int)height / 2)                                                       \
            return;                                                                                              \
        uint4 pixels[4];                                                                                         \
        demosaic_##method##_##packing##_block(src, src_offset, src_stride, src, src_offset, src_stride, width,   \
                                              height, 2 * bx, 2 * by, pixels, params);                           \
        const bool aligned = ((dst_offset | dst_stride) & 7u) == 0;                                              \
        __global uchar* row = dst + dst_offset + 2 * by * dst_stride;                                            \
        demosaic_store(row, 2 * bx, pixels[0], aligned);                                                         \
        demosaic_store(row, 2 * bx + 1, pixels[1], aligned);                                                     \
        demosaic_store(row + dst_stride, 2 * bx, pixels[2], aligned);                                            \
        demosaic_store(row + dst_stride, 2 * bx + 1, pixels[3], aligned);                                        \
    }

// Sample (dx, dy) from the pixel (px, py) of the block, in its window.
#define DEMOSAIC_S_WINDOW(dx, dy) window[2 + py + (dy)][2 + px + (dx)]

DEMOSAIC_BLOCK(bilinear, bytes, DEMOSAIC_BILINEAR(DEMOSAIC_S_WINDOW, is_red, is_blue, red_row, rgb))
DEMOSAIC_BLOCK(bilinear, words, DEMOSAIC_BILINEAR(DEMOSAIC_S_WINDOW, is_red, is_blue, red_row, rgb))
DEMOSAIC_BLOCK(mhc, bytes, DEMOSAIC_MHC(DEMOSAIC_S_WINDOW, is_red, is_blue, red_row, max_code, rgb))
DEMOSAIC_BLOCK(mhc, words, DEMOSAIC_MHC(DEMOSAIC_S_WINDOW, is_red, is_blue, red_row, max_code, rgb))

#if FRAMECL_KERNEL_WANTED(demosaic_bilinear_bytes)
DEMOSAIC_KERNEL(bilinear, bytes)
#endif
#if FRAMECL_KERNEL_WANTED(demosaic_bilinear_words)
DEMOSAIC_KERNEL(bilinear, words)
#endif
#if FRAMECL_KERNEL_WANTED(demosaic_mhc_bytes)
DEMOSAIC_KERNEL(mhc, bytes)
#endif
#if FRAMECL_KERNEL_WANTED(demosaic_mhc_words)
DEMOSAIC_KERNEL(mhc, words)
#endif
