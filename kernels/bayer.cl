// Bayer samples unpacked, with black level and white-balance gains (docs/filters.md,
// "`bayer`: unpacking, black level and white balance"; plugins/bayer/bayer.cpp folds
// both into one factor per colour).
//
// bayer_levels_<packing>: one work item per two samples side by side, (2 j, y) and
// (2 j + 1, y), which have the colours of one row of the 2x2 block. The stage's parameter
// block holds the black level, then the factors of block positions (0, 0), (1, 0),
// (0, 1) and (1, 1): the first two for even rows, the last two for odd ones. Each
// sample v becomes
//   min(max_code, ((v - black, or 0 below it) * factor + 2^13) >> 14)
// in integers, exact on any device: as factor is gain * max_code / (max_code - black) in
// units of 2^-14 and v - black is at most max_code - black, the product is at most
// gain * max_code * 2^14 <= 16 * 4095 * 2^14 < 2^30.
// The output has one sample per byte (8-bit input) or per little-endian 16-bit word.
// Bytes are read and written one by one: a client's offsets and strides need not be
// even, and a word's bytes need no alignment that way.

static inline uint bayer_level(uint v, uint black, uint max_code, uint factor)
{
    const uint above = v > black ? v - black : 0u;
    return min(max_code, (above * factor + 8192u) >> 14);
}

static inline uint bayer_word(__global const uchar* p)
{
    return (uint)p[0] | (uint)p[1] << 8;
}

// The two samples of pair j in a row of each packing.
static inline uint2 bayer_pair_bytes(__global const uchar* row, uint j)
{
    return (uint2)(row[2 * j], row[2 * j + 1]);
}

static inline uint2 bayer_pair_words(__global const uchar* row, uint j, uint max_code)
{
    return (uint2)(bayer_word(row + 4 * j), bayer_word(row + 4 * j + 2)) & max_code;
}

// MIPI RAW10: 4 samples in 5 bytes, the high 8 bits of each in bytes 0 to 3 and the low
// 2 bits of sample i in bits 2i and 2i + 1 of byte 4. Pair j is the first or second half
// of group j / 2.
static inline uint2 bayer_pair_mipi10(__global const uchar* row, uint j)
{
    __global const uchar* group = row + 5 * (j / 2);
    const uint first = 2 * (j % 2);
    const uint low = group[4];
    return (uint2)((uint)group[first] << 2 | (low >> (2 * first)) & 3u,
                   (uint)group[first + 1] << 2 | (low >> (2 * first + 2)) & 3u);
}

// MIPI RAW12: 2 samples in 3 bytes, the high 8 bits of each in bytes 0 and 1, the low
// 4 bits of sample 0 in bits 0 to 3 of byte 2 and of sample 1 in bits 4 to 7.
static inline uint2 bayer_pair_mipi12(__global const uchar* row, uint j)
{
    __global const uchar* group = row + 3 * j;
    return (uint2)((uint)group[0] << 4 | group[2] & 15u, (uint)group[1] << 4 | group[2] >> 4);
}

static inline void bayer_store(__global uchar* row, uint j, uint2 v, uint max_code)
{
    if (max_code <= 255u) {
        row[2 * j] = (uchar)v.x;
        row[2 * j + 1] = (uchar)v.y;
        return;
    }
    row[4 * j] = (uchar)v.x;
    row[4 * j + 1] = (uchar)(v.x >> 8);
    row[4 * j + 2] = (uchar)v.y;
    row[4 * j + 3] = (uchar)(v.y >> 8);
}

#define BAYER_LEVELS(packing, read)                                                                            \
    __kernel void bayer_levels_##packing(__global const uchar* restrict src, uint src_offset, uint src_stride,  \
                                         __global uchar* restrict dst, uint dst_offset, uint dst_stride,       \
                                         uint width, uint height, uint max_code,                               \
                                         __global const uint* restrict params)                                  \
    {                                                                                                           \
        const uint j = get_global_id(0);                                                                        \
        const uint y = get_global_id(1);                                                                        \
        if (j >= width / 2 || y >= height)                                                                      \
            return;                                                                                             \
        __global const uchar* row = src + src_offset + y * src_stride;                                          \
        const uint2 v = read;                                                                                   \
        const uint black = params[0];                                                                           \
        const uint2 factor = vload2(0, params + 1 + 2 * (y & 1u));                                              \
        bayer_store(dst + dst_offset + y * dst_stride, j,                                                       \
                    (uint2)(bayer_level(v.x, black, max_code, factor.x),                                        \
                            bayer_level(v.y, black, max_code, factor.y)),                                       \
                    max_code);                                                                                  \
    }

BAYER_LEVELS(bytes, bayer_pair_bytes(row, j))
BAYER_LEVELS(words, bayer_pair_words(row, j, max_code))
BAYER_LEVELS(mipi10, bayer_pair_mipi10(row, j))
BAYER_LEVELS(mipi12, bayer_pair_mipi12(row, j))

// bayer_levels_statistics_<packing>: bayer_levels_<packing> and the frame's statistics
// (docs/filters.md, "Statistics"; framecl/statistics.h) from the same reads, one work
// item per column of BAYER_STATISTICS_ROWS 2x2 blocks. `colours` holds the colour (0 R,
// 1 G, 2 B) of block positions (0, 0), (1, 0), (0, 1) and (1, 1) in bits 0-1, 2-3, 4-5
// and 6-7; the parameter block's word 5 is the saturation code. A work group adds into
// its own copy in local memory, then adds the words it touched to the frame's, so the
// frame's buffer takes one atomic per word and group rather than per sample; the more
// blocks a group covers, the fewer of those (a frame of noise touches most of the
// histogram's 256 bins in every group). The plugin's plan has the same rows per item.
#define BAYER_ZONES_X 16u
#define BAYER_ZONES_Y 12u
#define BAYER_ZONE_WORDS (BAYER_ZONES_X * BAYER_ZONES_Y * 3u)
#define BAYER_STATISTICS_WORDS (2u * BAYER_ZONE_WORDS + 256u)
#define BAYER_STATISTICS_ROWS 4u

#define BAYER_STATISTICS(packing, read)                                                                        \
    __kernel void bayer_levels_statistics_##packing(                                                           \
        __global const uchar* restrict src, uint src_offset, uint src_stride, __global uchar* restrict dst,     \
        uint dst_offset, uint dst_stride, uint width, uint height, uint max_code, uint colours,                 \
        __global const uint* restrict params, __global uint* restrict statistics)                              \
    {                                                                                                           \
        __local uint partial[BAYER_STATISTICS_WORDS];                                                           \
        const uint item = get_local_id(1) * get_local_size(0) + get_local_id(0);                                \
        const uint items = get_local_size(0) * get_local_size(1);                                               \
        for (uint w = item; w < BAYER_STATISTICS_WORDS; w += items)                                             \
            partial[w] = 0;                                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                           \
        const uint j = get_global_id(0);                                                                        \
        const uint black = params[0];                                                                           \
        const uint saturation = params[5];                                                                      \
        const uint weights[3] = {77u, 75u, 29u};                                                                \
        for (uint r = 0; r < BAYER_STATISTICS_ROWS; ++r) {                                                      \
            const uint k = get_global_id(1) * BAYER_STATISTICS_ROWS + r;                                        \
            if (j >= width / 2 || k >= height / 2)                                                              \
                break;                                                                                          \
            __global const uchar* row = src + src_offset + 2 * k * src_stride;                                  \
            const uint2 top = read;                                                                             \
            row += src_stride;                                                                                  \
            const uint2 bottom = read;                                                                          \
            const uint samples[4] = {top.x, top.y, bottom.x, bottom.y};                                         \
            __global uchar* out = dst + dst_offset + 2 * k * dst_stride;                                        \
            bayer_store(out, j,                                                                                 \
                        (uint2)(bayer_level(top.x, black, max_code, params[1]),                                 \
                                bayer_level(top.y, black, max_code, params[2])),                                \
                        max_code);                                                                              \
            bayer_store(out + dst_stride, j,                                                                    \
                        (uint2)(bayer_level(bottom.x, black, max_code, params[3]),                              \
                                bayer_level(bottom.y, black, max_code, params[4])),                             \
                        max_code);                                                                              \
            const uint zone = k * BAYER_ZONES_Y / (height / 2) * BAYER_ZONES_X + j * BAYER_ZONES_X / (width / 2);\
            uint luma = 0;                                                                                      \
            for (uint p = 0; p < 4; ++p) {                                                                      \
                const uint c = colours >> (2 * p) & 3u;                                                         \
                const uint v = samples[p];                                                                      \
                const uint above = v > black ? v - black : 0u;                                                  \
                luma += weights[c] * above;                                                                     \
                if (v < saturation) {                                                                           \
                    atomic_add(&partial[zone * 3 + c], above);                                                  \
                    atomic_inc(&partial[BAYER_ZONE_WORDS + zone * 3 + c]);                                      \
                }                                                                                               \
            }                                                                                                   \
            atomic_inc(&partial[2 * BAYER_ZONE_WORDS + (luma >> popcount(max_code))]);                          \
        }                                                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                           \
        for (uint w = item; w < BAYER_STATISTICS_WORDS; w += items)                                             \
            if (partial[w])                                                                                     \
                atomic_add(&statistics[w], partial[w]);                                                         \
    }

BAYER_STATISTICS(bytes, bayer_pair_bytes(row, j))
BAYER_STATISTICS(words, bayer_pair_words(row, j, max_code))
BAYER_STATISTICS(mipi10, bayer_pair_mipi10(row, j))
BAYER_STATISTICS(mipi12, bayer_pair_mipi12(row, j))
