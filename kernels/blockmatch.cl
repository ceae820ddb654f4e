// Block matching by SAD or SSD (guide §9.3.3), as docs/filters.md specifies it: for each
// block of the current R8 frame, the displacement (dx, dy) within ±range whose block of
// the previous frame matches it best, cur(x, y) against prev(x - dx, y - dy), the
// previous frame's pixels outside the image by `border`. A block at the right or bottom
// edge holds only its pixels inside the image. Ties go to the least |dx| + |dy|, then
// the least dy, then the least dx: every variant folds the candidates into one 64-bit
// key ordered that way (matchKey), so any order of search finds the same winner.
//
// The previous frame is the plugin's state (include/framecl/plugin.h, framecl_state):
// state 0 holds it, state 1 a word that blockmatch_keep sets to 1 once it has copied a
// frame there. The daemon zeroes both when the session opens and after a frame that did
// not run to its end; a frame that finds the word 0 writes zero vectors and cost 65535.
// It still searches in full, against zeros, so that the tuner and the kernel-time budget
// time a first frame as any other.
//
// Output: ABGR8888, one pixel per block, bytes (dx, dy, cost low, cost high); dx and dy
// two's complement, the cost saturated to 65535.
//
// The variants, per block:
//   blockmatch_global  one work item per block, every candidate's pixels read from
//                      global memory with the border rule applied per pixel: the
//                      baseline
//   blockmatch_local   a work-group of 64 per block: the search window, the block and
//                      2 x range pixels around it, is loaded into local memory once
//                      (border applied there), then each item takes every 64th
//                      candidate, and the group reduces the keys
//   blockmatch_packed  as local, 8 candidates dx .. dx + 7 of one dy per item, the
//                      window and the block read as aligned 32-bit words and compared
//                      4 pixels at a time with abs_diff on uchar4 (the guide's packed
//                      SAD): one window word and one block word per 4 pixels and 8
//                      candidates
//   blockmatch_tiled   packed's loads, with each word's bytes unpacked once into
//                      registers and reused by the 8 candidates: a subtraction and a
//                      multiply-add (or an add of the absolute value) per pixel and
//                      candidate, in exact float arithmetic
// The window is at most 107 x 96 bytes (packed, tiled) and the block 32^2, within every
// device's 32 KB of local memory.

#define METRIC_SAD 0u
#define METRIC_SSD 1u
#define MATCH_GROUP 64

// The candidate's place in the order of preference: the cost, then |dx| + |dy|, then dy,
// then dx. |dx|, |dy| <= 32 so each field fits in 7 bits.
ulong matchKey(uint cost, int dx, int dy)
{
    const uint rank = (uint)(abs(dx) + abs(dy)) << 14 | (uint)(dy + 32) << 7 | (uint)(dx + 32);
    return (ulong)cost << 32 | rank;
}

uint metricOf(int difference, uint metric)
{
    return metric == METRIC_SSD ? (uint)(difference * difference) : (uint)abs(difference);
}

// Whether state 1 says a previous frame is in state 0. (Its stride, the third argument
// of every plane, means nothing for one word.)
bool hasPrevious(__global const uchar* flag, uint flag_offset, uint flag_stride)
{
    (void)flag_stride;
    return *(__global const uint*)(flag + flag_offset) != 0;
}

// Writes block (bx, by)'s result: the key's candidate, or the first frame's.
void writeMatch(__global uchar* dst, uint dst_offset, uint dst_stride, int bx, int by, ulong key, bool previous)
{
    uchar4 result = (uchar4)(0, 0, 255, 255);
    if (previous) {
        const uint rank = (uint)key;
        const int dx = (int)(rank & 127u) - 32;
        const int dy = (int)(rank >> 7 & 127u) - 32;
        const uint cost = min((uint)(key >> 32), 65535u);
        result = (uchar4)((uchar)dx, (uchar)dy, (uchar)cost, (uchar)(cost >> 8));
    }
    vstore4(result, 0, dst + dst_offset + by * dst_stride + 4 * bx);
}

// Pixel (x, y) of the previous frame, `border` outside it.
uint previousPixel(__global const uchar* prev, uint prev_offset, uint prev_stride, int x, int y, int width,
                   int height, uint border, uint border_value)
{
    const int px = framecl_border_index(x, width, border);
    const int py = framecl_border_index(y, height, border);
    if (px < 0 || py < 0)
        return border_value;
    return prev[prev_offset + py * prev_stride + px];
}

__kernel void blockmatch_global(__global const uchar* src, uint src_offset, uint src_stride,
                                __global const uchar* prev, uint prev_offset, uint prev_stride,
                                __global const uchar* flag, uint flag_offset, uint flag_stride,
                                __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height,
                                uint block, int range, uint metric, uint border, uint border_value)
{
    const int bx = get_global_id(0), by = get_global_id(1);
    const int x0 = bx * block, y0 = by * block;
    if (x0 >= (int)width || y0 >= (int)height)
        return;
    const int bw = min((int)block, (int)width - x0), bh = min((int)block, (int)height - y0);
    ulong best = ULONG_MAX;
    for (int dy = -range; dy <= range; ++dy)
        for (int dx = -range; dx <= range; ++dx) {
            uint cost = 0;
            for (int y = 0; y < bh; ++y) {
                __global const uchar* row = src + src_offset + (y0 + y) * src_stride + x0;
                for (int x = 0; x < bw; ++x) {
                    const uint p = previousPixel(prev, prev_offset, prev_stride, x0 + x - dx, y0 + y - dy, width,
                                                 height, border, border_value);
                    cost += metricOf((int)row[x] - (int)p, metric);
                }
            }
            best = min(best, matchKey(cost, dx, dy));
        }
    writeMatch(dst, dst_offset, dst_stride, bx, by, best, hasPrevious(flag, flag_offset, flag_stride));
}

// Loads block (bx, by) and its search window into local memory: the block's pixels in
// `current` (current_stride bytes a row), the previous frame's pixels from
// (x0 - range - pad, y0 - range) on in `window` (window_width bytes a row, block +
// 2 range rows).
void loadWindow(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                uint prev_offset, uint prev_stride, int width, int height, int x0, int y0, int bw, int bh,
                int block, int range, int pad, int window_width, int current_stride, uint border,
                uint border_value, __local uchar* current, __local uchar* window)
{
    const int item = get_local_id(0);
    const int window_height = block + 2 * range;
    for (int i = item; i < window_width * window_height; i += MATCH_GROUP) {
        const int wy = i / window_width, wx = i - wy * window_width;
        window[i] = (uchar)previousPixel(prev, prev_offset, prev_stride, x0 - range - pad + wx, y0 - range + wy,
                                         width, height, border, border_value);
    }
    for (int i = item; i < bw * bh; i += MATCH_GROUP) {
        const int y = i / bw, x = i - y * bw;
        current[y * current_stride + x] = src[src_offset + (y0 + y) * src_stride + x0 + x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// The least of the group's keys, in item 0.
ulong groupMin(ulong key, __local ulong* keys)
{
    const int item = get_local_id(0);
    keys[item] = key;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = MATCH_GROUP / 2; step > 0; step /= 2) {
        if (item < step)
            keys[item] = min(keys[item], keys[item + step]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return keys[0];
}

// One work-group of MATCH_GROUP items per block: global (blocks across x MATCH_GROUP,
// blocks down). The daemon may cut the dispatch into bands of block rows, with global
// offsets, so the block comes from the global ids.
__kernel __attribute__((reqd_work_group_size(MATCH_GROUP, 1, 1))) void
blockmatch_local(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                 uint prev_offset, uint prev_stride, __global const uchar* flag, uint flag_offset, uint flag_stride,
                 __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height, uint block,
                 int range, uint metric, uint border, uint border_value, __local uchar* current,
                 __local uchar* window)
{
    __local ulong keys[MATCH_GROUP];
    const int bx = get_global_id(0) / MATCH_GROUP, by = get_global_id(1);
    const int x0 = bx * block, y0 = by * block;
    const int bw = min((int)block, (int)width - x0), bh = min((int)block, (int)height - y0);
    const int window_width = block + 2 * range;
    loadWindow(src, src_offset, src_stride, prev, prev_offset, prev_stride, width, height, x0, y0, bw, bh, block,
               range, 0, window_width, block, border, border_value, current, window);

    const int side = 2 * range + 1;
    ulong best = ULONG_MAX;
    for (int c = get_local_id(0); c < side * side; c += MATCH_GROUP) {
        const int dy = c / side - range, dx = c % side - range;
        uint cost = 0;
        for (int y = 0; y < bh; ++y) {
            __local const uchar* row = current + y * block;
            // prev(x0 + x - dx, y0 + y - dy) is window pixel (x - dx + range, y - dy + range).
            __local const uchar* candidate = window + (y - dy + range) * window_width + range - dx;
            for (int x = 0; x < bw; ++x)
                cost += metricOf((int)row[x] - (int)candidate[x], metric);
        }
        best = min(best, matchKey(cost, dx, dy));
    }
    best = groupMin(best, keys);
    if (get_local_id(0) == 0)
        writeMatch(dst, dst_offset, dst_stride, bx, by, best, hasPrevious(flag, flag_offset, flag_stride));
}

// The sum of the four bytes of `d` (SAD) or of their squares (SSD): one dot product
// instruction where the device has cl_khr_integer_dot_product (NVIDIA's IDP4A; on
// Adreno the guide's qcom_dot8 family is the same idea).
uint packedCost(uint d, uint metric)
{
#ifdef cl_khr_integer_dot_product
    return dot_4x8packed_uu_uint(d, metric == METRIC_SSD ? d : 0x01010101u);
#else
    const uint4 v = (uint4)(d & 255u, d >> 8 & 255u, d >> 16 & 255u, d >> 24);
    return metric == METRIC_SSD ? v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w : v.x + v.y + v.z + v.w;
#endif
}

// Bytes s to s + 3 of the 8 bytes lo, hi (little-endian): a funnel shift.
uint bytesAt(uint lo, uint hi, uint s)
{
    return (uint)(upsample(hi, lo) >> (8 * s));
}

// The word-aligned window of blockmatch_packed and blockmatch_tiled, which search 8
// candidates dx0 .. dx0 + 7 of one dy per work item. For pixel x of the block, candidate
// dx0 + k reads window column x + base + 7 - k (base = 2 range - 8 j + pad - 7 for the
// item's run j of 8 dx): the window starts `pad` columns left of the search (7 to 10,
// so that base is a multiple of 4), and the 4 pixels of word g of a block row then meet
// bytes 7 - k on of window words base / 4 + g, + 1 and + 2. The block's rows are padded
// to whole words, whose bytes past the block's width are never counted.
struct WordWindow {
    int words; // per block row
    int base0; // base of run 0
    int width; // bytes per window row, a multiple of 4
};

struct WordWindow wordWindow(int block, int range)
{
    struct WordWindow window;
    window.words = (block + 3) / 4;
    const int pad = 7 + (4 - 2 * range % 4) % 4;
    window.base0 = 2 * range + pad - 7;
    window.width = window.base0 + 4 * window.words + 8;
    return window;
}

// The guide's packed SAD: adds block row `c`'s pixels against window row `w` to the
// costs of the item's 8 candidates, loading one window word and one block word per 4
// pixels and comparing the block's 4 pixels with each candidate's, a funnel shift of two
// window words, by abs_diff on uchar4; a mask leaves out the pixels of a block cut by
// the image's right edge.
void packedRow(__local const uint* w, __local const uint* c, int bw, uint metric, uint cost[8])
{
    uint w0 = w[0], w1 = w[1];
    for (int g = 0; 4 * g < bw; ++g) {
        const uint w2 = w[g + 2];
        const int left = bw - 4 * g; // the block's pixels from this word on, at least 1
        const uint mask = left >= 4 ? 0xffffffffu : (1u << 8 * left) - 1;
        const uchar4 pixels = as_uchar4(c[g]);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            const uint s = 7 - k;
            const uint candidate = s < 4 ? bytesAt(w0, w1, s) : bytesAt(w1, w2, s - 4);
            const uint d = as_uint(abs_diff(pixels, as_uchar4(candidate))) & mask;
            cost[k] += packedCost(d, metric);
        }
        w0 = w1;
        w1 = w2;
    }
}

// A byte as the float 2^23 + byte: one bitwise or, where a conversion instruction is
// slower. Two such floats subtract to the bytes' exact difference.
float biasedByte(uint word, int i)
{
    return as_float(0x4b000000u | (word >> 8 * i & 255u));
}

// Adds `valid` pixels p of a block row against window bytes b to the row's costs
// (blockmatch_tiled): candidate k meets pixel i at b[i + 7 - k].
void tiledGroup(const float b[12], const float p[4], int valid, bool ssd, float row[8])
{
#pragma unroll
    for (int k = 0; k < 8; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            if (i < valid) {
                const float d = p[i] - b[i + 7 - k];
                row[k] = ssd ? mad(d, d, row[k]) : row[k] + fabs(d);
            }
}

// Adds block row `c`'s pixels against window row `w` to the costs of the item's 8
// candidates (blockmatch_tiled). The window's bytes stay unpacked in registers, b[0..11]
// the three words the current 4 pixels meet, so each byte is unpacked once and serves 8
// candidates: per pixel and candidate a subtraction and a multiply-add (SSD) or an add
// of the absolute value (SAD). In floats: GPUs issue twice as much float arithmetic as
// integer, and a row's costs are integers below 2^24 (32 x 255^2), which floats hold
// exactly whatever the rounding of mad (its operands and results are all such integers);
// each row's are added to the integer costs. `ssd` is a constant where it is
// called, so each metric gets a loop of its own, and so does a block cut by the image's
// right edge in its last word.
void tiledRow(__local const uint* w, __local const uint* c, int bw, bool ssd, uint cost[8])
{
    float b[12], p[4], row[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        b[i] = biasedByte(w[0], i);
        b[4 + i] = biasedByte(w[1], i);
    }
    int g = 0;
    for (; 4 * g + 4 <= bw; ++g) {
        const uint next = w[g + 2], pixels = c[g];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            b[8 + i] = biasedByte(next, i);
            p[i] = biasedByte(pixels, i);
        }
        tiledGroup(b, p, 4, ssd, row);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            b[i] = b[i + 4];
    }
    if (4 * g < bw) {
        const uint next = w[g + 2], pixels = c[g];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            b[8 + i] = biasedByte(next, i);
            p[i] = biasedByte(pixels, i);
        }
        tiledGroup(b, p, bw - 4 * g, ssd, row);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k)
        cost[k] += (uint)row[k];
}

// The search of blockmatch_packed and blockmatch_tiled on the word-aligned window, each
// work item 8 candidates of one dy at a time; `tiled` (a constant where called) picks
// the row function, so each kernel compiles only its own.
void wordSearch(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                uint prev_offset, uint prev_stride, __global const uchar* flag, uint flag_offset, uint flag_stride,
                __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height, uint block, int range,
                uint metric, uint border, uint border_value, __local uchar* current, __local uchar* window,
                __local ulong* keys, bool tiled)
{
    const int bx = get_global_id(0) / MATCH_GROUP, by = get_global_id(1);
    const int x0 = bx * block, y0 = by * block;
    const int bw = min((int)block, (int)width - x0), bh = min((int)block, (int)height - y0);
    const struct WordWindow layout = wordWindow(block, range);
    loadWindow(src, src_offset, src_stride, prev, prev_offset, prev_stride, width, height, x0, y0, bw, bh, block,
               range, layout.base0 + 7 - 2 * range, layout.width, 4 * layout.words, border, border_value, current,
               window);
    __local const uint* window_words = (__local const uint*)window;
    __local const uint* block_words = (__local const uint*)current;

    const int side = 2 * range + 1, runs = (side + 7) / 8;
    ulong best = ULONG_MAX;
    for (int u = get_local_id(0); u < side * runs; u += MATCH_GROUP) {
        const int dy = u / runs - range, j = u % runs, dx0 = 8 * j - range;
        uint cost[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int y = 0; y < bh; ++y) {
            __local const uint* w = window_words + ((y - dy + range) * layout.width + layout.base0 - 8 * j) / 4;
            __local const uint* c = block_words + y * layout.words;
            if (!tiled)
                packedRow(w, c, bw, metric, cost);
            else if (metric == METRIC_SSD)
                tiledRow(w, c, bw, true, cost);
            else
                tiledRow(w, c, bw, false, cost);
        }
#pragma unroll
        for (int k = 0; k < 8; ++k)
            if (dx0 + k <= range)
                best = min(best, matchKey(cost[k], dx0 + k, dy));
    }
    best = groupMin(best, keys);
    if (get_local_id(0) == 0)
        writeMatch(dst, dst_offset, dst_stride, bx, by, best, hasPrevious(flag, flag_offset, flag_stride));
}

__kernel __attribute__((reqd_work_group_size(MATCH_GROUP, 1, 1))) void
blockmatch_packed(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                  uint prev_offset, uint prev_stride, __global const uchar* flag, uint flag_offset, uint flag_stride,
                  __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height, uint block,
                  int range, uint metric, uint border, uint border_value, __local uchar* current,
                  __local uchar* window)
{
    __local ulong keys[MATCH_GROUP];
    wordSearch(src, src_offset, src_stride, prev, prev_offset, prev_stride, flag, flag_offset, flag_stride, dst,
               dst_offset, dst_stride, width, height, block, range, metric, border, border_value, current, window,
               keys, false);
}

// packed's work with the bytes unpacked once per row into registers instead of compared
// 4 at a time (tiledRow): on a GPU without byte-vector arithmetic each candidate's 4
// bytes cost more to take apart than to compare.
__kernel __attribute__((reqd_work_group_size(MATCH_GROUP, 1, 1))) void
blockmatch_tiled(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                 uint prev_offset, uint prev_stride, __global const uchar* flag, uint flag_offset, uint flag_stride,
                 __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height, uint block,
                 int range, uint metric, uint border, uint border_value, __local uchar* current,
                 __local uchar* window)
{
    __local ulong keys[MATCH_GROUP];
    wordSearch(src, src_offset, src_stride, prev, prev_offset, prev_stride, flag, flag_offset, flag_stride, dst,
               dst_offset, dst_stride, width, height, block, range, metric, border, border_value, current, window,
               keys, true);
}

// After the match: the frame becomes the next one's previous frame, and state 1 says so.
// One work item per pixel; the daemon may cut it into tiles.
__kernel void blockmatch_keep(__global const uchar* src, uint src_offset, uint src_stride, __global uchar* prev,
                              uint prev_offset, uint prev_stride, __global uchar* flag, uint flag_offset,
                              uint flag_stride, uint width, uint height)
{
    const uint x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    prev[prev_offset + y * prev_stride + x] = src[src_offset + y * src_stride + x];
    (void)flag_stride;
    if (x == 0 && y == 0)
        *(__global uint*)(flag + flag_offset) = 1;
}
