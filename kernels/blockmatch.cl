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
//   blockmatch_packed  as local, each item four horizontally adjacent candidates at a
//                      time: one 4-byte load of the window per pixel and abs_diff on
//                      uchar4 (the guide's packed SAD), the window padded on the left so
//                      that every candidate's 4 bytes lie inside it
// The work-group variants take 8 bytes of private state per candidate; the window is at
// most (32 + 64 + 3)^2 bytes and the block 32^2, within every device's 32 KB of local memory.

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

// Whether state 1 says a previous frame is in state 0.
bool hasPrevious(__global const uchar* flag, uint flag_offset)
{
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
    writeMatch(dst, dst_offset, dst_stride, bx, by, best, hasPrevious(flag, flag_offset));
}

// Loads block (bx, by) and its search window into local memory: the block packed in
// `current` (`block` bytes a row), the previous frame's pixels from (x0 - range - pad,
// y0 - range) on in `window` (window_width bytes a row, block + 2 range rows).
void loadWindow(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                uint prev_offset, uint prev_stride, int width, int height, int x0, int y0, int bw, int bh,
                int block, int range, int pad, int window_width, uint border, uint border_value,
                __local uchar* current, __local uchar* window)
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
        current[y * block + x] = src[src_offset + (y0 + y) * src_stride + x0 + x];
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
               range, 0, window_width, border, border_value, current, window);

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
        writeMatch(dst, dst_offset, dst_stride, bx, by, best, hasPrevious(flag, flag_offset));
}

// As blockmatch_local, each item four candidates dx, dx + 1, dx + 2, dx + 3 of one dy at
// a time. For pixel x of the block their window columns are x - dx + range + 3 down to
// x - dx + range: one 4-byte load, whose element e is candidate dx + 3 - e. The window
// starts 3 columns further left so that the load stays inside it for the last quad,
// whose candidates past +range are left out.
__kernel __attribute__((reqd_work_group_size(MATCH_GROUP, 1, 1))) void
blockmatch_packed(__global const uchar* src, uint src_offset, uint src_stride, __global const uchar* prev,
                  uint prev_offset, uint prev_stride, __global const uchar* flag, uint flag_offset, uint flag_stride,
                  __global uchar* dst, uint dst_offset, uint dst_stride, uint width, uint height, uint block,
                  int range, uint metric, uint border, uint border_value, __local uchar* current,
                  __local uchar* window)
{
    __local ulong keys[MATCH_GROUP];
    const int bx = get_global_id(0) / MATCH_GROUP, by = get_global_id(1);
    const int x0 = bx * block, y0 = by * block;
    const int bw = min((int)block, (int)width - x0), bh = min((int)block, (int)height - y0);
    const int window_width = block + 2 * range + 3;
    loadWindow(src, src_offset, src_stride, prev, prev_offset, prev_stride, width, height, x0, y0, bw, bh, block,
               range, 3, window_width, border, border_value, current, window);

    const int side = 2 * range + 1, quads = (side + 3) / 4;
    ulong best = ULONG_MAX;
    for (int c = get_local_id(0); c < side * quads; c += MATCH_GROUP) {
        const int dy = c / quads - range, dx = 4 * (c % quads) - range;
        uint4 cost = 0;
        for (int y = 0; y < bh; ++y) {
            __local const uchar* row = current + y * block;
            __local const uchar* candidates = window + (y - dy + range) * window_width + range - dx;
            for (int x = 0; x < bw; ++x) {
                const uint4 difference = convert_uint4(abs_diff(vload4(0, candidates + x), (uchar4)(row[x])));
                cost = metric == METRIC_SSD ? mad_sat(difference, difference, cost) : cost + difference;
            }
        }
        best = min(best, matchKey(cost.s3, dx, dy));
        if (dx + 1 <= range)
            best = min(best, matchKey(cost.s2, dx + 1, dy));
        if (dx + 2 <= range)
            best = min(best, matchKey(cost.s1, dx + 2, dy));
        if (dx + 3 <= range)
            best = min(best, matchKey(cost.s0, dx + 3, dy));
    }
    best = groupMin(best, keys);
    if (get_local_id(0) == 0)
        writeMatch(dst, dst_offset, dst_stride, bx, by, best, hasPrevious(flag, flag_offset));
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
    if (x == 0 && y == 0)
        *(__global uint*)(flag + flag_offset) = 1;
}
