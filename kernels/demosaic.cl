// Demosaicing: a Bayer plane with one sample per byte or 16-bit word to ABGR16161616
// (docs/filters.md, "`demosaic`: Bayer to RGB"). One work item per 2x2 block of the
// pattern, whose four pixels are one of each site: R, B, and the two G (one in R's row,
// one in B's).
//
// Samples outside the plane are reflect101's (cb|abcd|cb), which keeps the pattern's
// colour at every position: the plane's sides are even. Every sum is of integers, so
// the GPU and the CPU reference agree exactly. Each output channel c of `bits` bits is
// widened to 16 by repeating its high bits below it, (c << (16 - bits)) | (c >> (2 bits
// - 16)), so that the largest code becomes 65535; alpha is 65535.
//
//   demosaic_bilinear_<packing>  OpenCV's bilinear (COLOR_Bayer*2BGR): a missing G is
//                                (N + S + W + E + 2) >> 2, a missing R or B (N + S + 1) >> 1,
//                                (W + E + 1) >> 1 or the four diagonals' (sum + 2) >> 2.
//   demosaic_mhc_<packing>       Malvar, He and Cutler's gradient-corrected linear filters
//                                (ICASSP 2004), 5x5, weights in sixteenths:
//                                (sum + 8) >> 4, clamped to [0, max_code].

static inline int demosaic_sample_bytes(__global const uchar* plane, uint stride, int x, int y, uint max_code)
{
    return plane[y * stride + x];
}

static inline int demosaic_sample_words(__global const uchar* plane, uint stride, int x, int y, uint max_code)
{
    const uchar2 b = vload2(0, plane + y * stride + 2 * x);
    return (int)(((uint)b.x | (uint)b.y << 8) & max_code);
}

static inline ushort demosaic_widen(int c, uint bits)
{
    return (ushort)((uint)c << (16u - bits) | (uint)c >> (2u * bits - 16u));
}

static inline void demosaic_store(__global uchar* row, int x, int3 rgb, uint bits)
{
    const ushort4 p = (ushort4)(demosaic_widen(rgb.x, bits), demosaic_widen(rgb.y, bits), demosaic_widen(rgb.z, bits),
                                (ushort)65535);
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

// src plane, dst plane, width, height, red_x, red_y (R's place in the 2x2 block), max_code
// (the largest code; a word's bits above it are ignored), bits.
#define DEMOSAIC_KERNEL(method, packing, BODY)                                                                    \
    __kernel void demosaic_##method##_##packing(__global const uchar* restrict src, uint src_offset,             \
                                                uint src_stride, __global uchar* restrict dst, uint dst_offset,  \
                                                uint dst_stride, uint width, uint height, uint red_x,            \
                                                uint red_y, uint max_code, uint bits)                            \
    {                                                                                                            \
        const int bx = get_global_id(0);                                                                         \
        const int by = get_global_id(1);                                                                         \
        if (bx >= (int)width / 2 || by >= (int)height / 2)                                                       \
            return;                                                                                              \
        __global const uchar* plane = src + src_offset;                                                          \
        for (int py = 0; py < 2; ++py)                                                                           \
            for (int px = 0; px < 2; ++px) {                                                                     \
                const int x = 2 * bx + px;                                                                       \
                const int y = 2 * by + py;                                                                       \
                const bool is_red = px == (int)red_x && py == (int)red_y;                                        \
                const bool is_blue = px != (int)red_x && py != (int)red_y;                                       \
                const bool red_row = py == (int)red_y;                                                           \
                int3 rgb;                                                                                        \
                BODY;                                                                                            \
                demosaic_store(dst + dst_offset + y * dst_stride, x, rgb, bits);                                 \
            }                                                                                                    \
    }

// Sample (x, y) of the plane, reflected into it.
#define DEMOSAIC_REFLECTED(packing)                                                                             \
    static inline int demosaic_reflected_##packing(__global const uchar* plane, uint stride, int x, int y,     \
                                                   uint width, uint height, uint max_code)                    \
    {                                                                                                          \
        return demosaic_sample_##packing(plane, stride,                                                        \
                                         framecl_border_index(x, (int)width, FRAMECL_BORDER_REFLECT101),      \
                                         framecl_border_index(y, (int)height, FRAMECL_BORDER_REFLECT101),     \
                                         max_code);                                                            \
    }
DEMOSAIC_REFLECTED(bytes)
DEMOSAIC_REFLECTED(words)

#define S_BYTES(dx, dy) demosaic_reflected_bytes(plane, src_stride, x + (dx), y + (dy), width, height, max_code)
#define S_WORDS(dx, dy) demosaic_reflected_words(plane, src_stride, x + (dx), y + (dy), width, height, max_code)

DEMOSAIC_KERNEL(bilinear, bytes, DEMOSAIC_BILINEAR(S_BYTES, is_red, is_blue, red_row, rgb))
DEMOSAIC_KERNEL(bilinear, words, DEMOSAIC_BILINEAR(S_WORDS, is_red, is_blue, red_row, rgb))
DEMOSAIC_KERNEL(mhc, bytes, DEMOSAIC_MHC(S_BYTES, is_red, is_blue, red_row, max_code, rgb))
DEMOSAIC_KERNEL(mhc, words, DEMOSAIC_MHC(S_WORDS, is_red, is_blue, red_row, max_code, rgb))
