// Mean-shift filtering: ABGR8888 -> ABGR8888, the algorithm of OpenCV's
// pyrMeanShiftFiltering with maxLevel = 0 (modules/imgproc/src/segmentation.cpp), as
// docs/filters.md specifies it. For each pixel, from its own position and colour:
//
//   repeat at most max_iter times:
//     window = (2 sp + 1)² pixels around the position, clipped to the image
//     take   = the window's pixels whose colour lies within sr of the current colour:
//              (R - r)² + (G - g)² + (B - b)² <= sr2, sr2 = cvRound(sr²) (the plugin's)
//     no pixel taken: stop, keeping position and colour
//     new position and colour = the means of the taken pixels' positions and colours,
//              each rounded to nearest with halves to even (roundedMean)
//     stop where the position did not move, or where |dx| + |dy| + the colour's
//              squared change <= eps (the plugin passes floor(epsilon): the left side
//              is a whole number)
//   output = the last colour, at the pixel's own position, with the pixel's own alpha
//
// Everything is 32-bit integer arithmetic, exact: no fp64 is needed (Adreno has none),
// and every variant equals the CPU reference on every pixel. A count is at most
// 65² = 4225 (sp <= 32) and a coordinate below 65536 (the plugin refuses larger
// frames), so every sum stays below 2^31.
//
// The variants, from the mean-shift paper (Pang et al., "Research on Mean Shift
// Algorithm Using OpenCL on Multiple Many-core Platforms", Computer Science, 2013):
//
//   meanshift_baseline  one pixel per work item, every window pixel's R, G and B read
//                       from global memory as three bytes, as OpenCV's loop reads them.
//                       Reads 3 (2 sp + 1)² bytes per iteration (363 at sp = 5), plus
//                       the pixel's 4; writes 4 bytes per output pixel.
//   meanshift_packed    one pixel per work item; each window pixel read in one 32-bit
//                       load, the paper's pointer access of 4 bytes (§3.4, §4.4.2:
//                       faster than vloadn on the GPUs), a plain uint pointer where the
//                       plane's offset and stride are multiples of 4 and vload4 where
//                       not (a misaligned uint load is undefined); each row unrolled
//                       4 pixels a step (§3.4, §4.4.1); work groups of 32x4 (§3.1,
//                       §4.1: 128 work items, 32 along the row, for coalesced reads).
//                       Reads 4 (2 sp + 1)² bytes per iteration (484 at sp = 5), mostly
//                       from cache, plus the pixel's 4; writes 4.
//   meanshift_local     packed, with the work group's neighbourhood in local memory
//                       (§3.3, the paper's option 2): the group's 32x4 pixels and
//                       `margin` more on every side, loaded once by the group; a window
//                       that lies inside this tile reads it there, one that moved out
//                       of it reads global memory as packed does. The margin is sp
//                       and up to sp more while the tile fits in 32 KiB (the plugin's
//                       tileMargin). Reads 4 (32 + 2 margin)(4 + 2 margin) / 128 bytes
//                       of global memory per output (39 at sp = 5, margin 10), plus 4
//                       (2 sp + 1)² per iteration whose window left the tile; writes 4.
//
// The paper found local memory no faster than global reads on Fermi and Cypress (§4.3):
// the tile test and the fallback cost what the saved loads gain, and the windows of
// later iterations move out of any fixed tile. Current GPUs cache global reads in the
// same on-chip memory, so the plugin's `auto` is packed; local is here to measure.
//
// Pixels: ABGR8888 holds the bytes R, G, B, A in memory order, so a pixel read as a
// 32-bit little-endian word (every GPU framecld meets) is R | G << 8 | B << 16 | A << 24.

// Where a packed window reads its pixels (the argument is a constant at every call, so
// that each inlined copy keeps only its own loads).
#define SOURCE_ALIGNED 0   // global memory through a uint pointer
#define SOURCE_UNALIGNED 1 // global memory through vload4
#define SOURCE_LOCAL 2     // the work group's tile

typedef struct {
    int x, y;    // the window's centre
    int3 colour; // R, G, B
} ShiftPoint;

typedef struct {
    int minx, maxx, miny, maxy; // inclusive, inside the image
} Window;

typedef struct {
    int count;   // pixels taken
    int sx, sy;  // the sums of their columns and of their rows
    int3 colour; // the sums of their R, G and B
} WindowSum;

// s / n rounded to nearest, halves to even, for s >= 0 and n > 0: cvRound (round half
// to even) of the exact quotient.
int roundedMean(int s, int n)
{
    const int q = s / n;
    const int twice_remainder = 2 * (s - q * n);
    return q + (twice_remainder > n || (twice_remainder == n && (q & 1)) ? 1 : 0);
}

// The window around `point`'s position, clipped to the image as OpenCV clips it: no
// pixel outside the image takes part, so there is no border rule.
Window clippedWindow(ShiftPoint point, int sp, int width, int height)
{
    Window window;
    window.minx = max(point.x - sp, 0);
    window.maxx = min(point.x + sp, width - 1);
    window.miny = max(point.y - sp, 0);
    window.maxy = min(point.y + sp, height - 1);
    return window;
}

// Adds the pixel at column x of colour p to `sum` when it lies within the colour
// radius of `centre`. The body is short enough for compilers to predicate it rather
// than branch; the row is added to sy by the caller, once per row, as OpenCV does.
void accumulate(WindowSum* sum, int3 p, int x, int3 centre, int sr2)
{
    const int3 d = p - centre;
    if (d.x * d.x + d.y * d.y + d.z * d.z <= sr2) {
        sum->count += 1;
        sum->sx += x;
        sum->colour += p;
    }
}

// One step of OpenCV's loop once a window is summed: moves `point` to the rounded
// means. Returns whether to go on: false where no pixel was taken (point unchanged),
// where the position did not move, or where the move plus the colour's squared change
// is at most eps.
bool shiftStep(ShiftPoint* point, WindowSum sum, int eps)
{
    if (sum.count == 0)
        return false;
    ShiftPoint next;
    next.x = roundedMean(sum.sx, sum.count);
    next.y = roundedMean(sum.sy, sum.count);
    next.colour = (int3)(roundedMean(sum.colour.x, sum.count),
                         roundedMean(sum.colour.y, sum.count),
                         roundedMean(sum.colour.z, sum.count));
    const int moved = abs(next.x - point->x) + abs(next.y - point->y);
    const int3 change = next.colour - point->colour;
    const bool converged =
        moved == 0 || moved + change.x * change.x + change.y * change.y + change.z * change.z <= eps;
    *point = next;
    return !converged;
}

// R, G and B of a pixel read as one 32-bit word.
int3 unpackRgb(uint pixel)
{
    return (int3)((int)(pixel & 0xffu), (int)((pixel >> 8) & 0xffu), (int)((pixel >> 16) & 0xffu));
}

// The 32-bit pixel at column x of the row starting at `row` (global memory).
static inline __attribute__((always_inline)) uint globalPixel(__global const uchar* row, int x,
                                                                const int source)
{
    if (source == SOURCE_ALIGNED)
        return ((__global const uint*)row)[x];
    return as_uint(vload4(x, row));
}

// Row y of a window, as each source addresses it: the row in global memory, and in the
// tile, whose element 0 is the pixel (tile_x0, tile_y0) and whose rows are tile_stride
// pixels apart.
typedef struct {
    __global const uchar* row; // row y of the plane
    __local const uint* tile;
    int tile_row; // + x: the element of the tile that holds pixel (x, y)
} PackedRow;

// The 32-bit pixel at column x of `row`, from `source`.
static inline __attribute__((always_inline)) uint rowPixel(PackedRow row, int x, const int source)
{
    if (source == SOURCE_LOCAL)
        return row.tile[row.tile_row + x];
    return globalPixel(row.row, x, source);
}

// The window's sums, each pixel read in one 32-bit load from `source`. Each row is
// unrolled by hand, four pixels a step and then the rest, as OpenCV's CV_ENABLE_UNROLLED
// loop and the paper's 16-byte steps (§4.4.1) do: the bounds are not constants, and not
// every compiler unrolls such a loop for a pragma (PoCL's does not).
static inline __attribute__((always_inline)) WindowSum
windowSumPacked(const int source, __global const uchar* src, uint src_offset, uint src_stride,
                __local const uint* tile, int tile_x0, int tile_y0, int tile_stride,
                Window window, int3 centre, int sr2)
{
    WindowSum sum = {0, 0, 0, (int3)(0)};
    for (int y = window.miny; y <= window.maxy; ++y) {
        const int count_before = sum.count;
        const PackedRow row = {src + src_offset + (uint)y * src_stride, tile,
                               (y - tile_y0) * tile_stride - tile_x0};
        int x = window.minx;
        for (; x + 3 <= window.maxx; x += 4) {
            accumulate(&sum, unpackRgb(rowPixel(row, x, source)), x, centre, sr2);
            accumulate(&sum, unpackRgb(rowPixel(row, x + 1, source)), x + 1, centre, sr2);
            accumulate(&sum, unpackRgb(rowPixel(row, x + 2, source)), x + 2, centre, sr2);
            accumulate(&sum, unpackRgb(rowPixel(row, x + 3, source)), x + 3, centre, sr2);
        }
        for (; x <= window.maxx; ++x)
            accumulate(&sum, unpackRgb(rowPixel(row, x, source)), x, centre, sr2);
        sum.sy += y * (sum.count - count_before);
    }
    return sum;
}

// Writes the final colour with the input pixel's alpha.
void storePixel(__global uchar* dst, uint dst_offset, uint dst_stride, int x, int y,
                int3 colour, uchar alpha)
{
    vstore4((uchar4)((uchar)colour.x, (uchar)colour.y, (uchar)colour.z, alpha), x,
            dst + dst_offset + (uint)y * dst_stride);
}

// Paper §3.3-3.4's starting point: one pixel per work item, global memory, each
// channel a byte load, OpenCV's loop as it stands.
__kernel void meanshift_baseline(__global const uchar* restrict src, uint src_offset,
                                 uint src_stride, __global uchar* restrict dst, uint dst_offset,
                                 uint dst_stride, uint width, uint height, uint sp, uint sr2,
                                 uint max_iter, uint eps)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= (int)width || y >= (int)height)
        return;
    const uchar4 own = vload4(x, src + src_offset + (uint)y * src_stride);
    ShiftPoint point = {x, y, convert_int3(own.xyz)};
    for (uint iter = 0; iter < max_iter; ++iter) {
        const Window window = clippedWindow(point, (int)sp, (int)width, (int)height);
        WindowSum sum = {0, 0, 0, (int3)(0)};
        for (int wy = window.miny; wy <= window.maxy; ++wy) {
            __global const uchar* row = src + src_offset + (uint)wy * src_stride;
            const int count_before = sum.count;
            for (int wx = window.minx; wx <= window.maxx; ++wx) {
                const int3 p = (int3)((int)row[4 * wx], (int)row[4 * wx + 1], (int)row[4 * wx + 2]);
                accumulate(&sum, p, wx, point.colour, (int)sr2);
            }
            sum.sy += wy * (sum.count - count_before);
        }
        if (!shiftStep(&point, sum, (int)eps))
            break;
    }
    storePixel(dst, dst_offset, dst_stride, x, y, point.colour, own.w);
}

// Paper §3.4 and §4.4: 32-bit loads, unrolled rows.
__kernel void meanshift_packed(__global const uchar* restrict src, uint src_offset,
                               uint src_stride, __global uchar* restrict dst, uint dst_offset,
                               uint dst_stride, uint width, uint height, uint sp, uint sr2,
                               uint max_iter, uint eps)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= (int)width || y >= (int)height)
        return;
    const bool aligned = ((src_offset | src_stride) & 3u) == 0u; // the same for every work item
    const uchar4 own = vload4(x, src + src_offset + (uint)y * src_stride);
    ShiftPoint point = {x, y, convert_int3(own.xyz)};
    for (uint iter = 0; iter < max_iter; ++iter) {
        const Window window = clippedWindow(point, (int)sp, (int)width, (int)height);
        const WindowSum sum =
            aligned ? windowSumPacked(SOURCE_ALIGNED, src, src_offset, src_stride, 0, 0, 0, 0,
                                      window, point.colour, (int)sr2)
                    : windowSumPacked(SOURCE_UNALIGNED, src, src_offset, src_stride, 0, 0, 0, 0,
                                      window, point.colour, (int)sr2);
        if (!shiftStep(&point, sum, (int)eps))
            break;
    }
    storePixel(dst, dst_offset, dst_stride, x, y, point.colour, own.w);
}

// Paper §3.3: packed, with the group's neighbourhood in local memory. The tile holds
// the pixels (gx0 - margin .. gx0 + group width - 1 + margin) x (gy0 - margin .. gy0 +
// group height - 1 + margin) that lie in the image, (gx0, gy0) the group's first work
// item; its rows are (group width + 2 margin) pixels apart. tile_capacity is the
// pixels `tile` holds: a work group larger than the plugin planned for (a daemon that
// chose another size) reads global memory only, rather than past the tile.
__kernel void meanshift_local(__global const uchar* restrict src, uint src_offset,
                              uint src_stride, __global uchar* restrict dst, uint dst_offset,
                              uint dst_stride, uint width, uint height, uint sp, uint sr2,
                              uint max_iter, uint eps, __local uint* tile, uint margin,
                              uint tile_capacity)
{
    // The global ids include a tile's global offset (the daemon may split the dispatch
    // into bands of rows); the group's first work item is found from them.
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    const int group_width = (int)get_local_size(0), group_height = (int)get_local_size(1);
    const int tile_x0 = x - (int)get_local_id(0) - (int)margin;
    const int tile_y0 = y - (int)get_local_id(1) - (int)margin;
    const int tile_width = group_width + 2 * (int)margin;
    const int tile_height = group_height + 2 * (int)margin;
    const bool tiled = (uint)(tile_width * tile_height) <= tile_capacity; // the same for the group
    const bool aligned = ((src_offset | src_stride) & 3u) == 0u;

    // Every work item of the group loads its share of the tile, those past the image's
    // edge included, before any may return.
    if (tiled) {
        const int first = (int)get_local_id(1) * group_width + (int)get_local_id(0);
        for (int i = first; i < tile_width * tile_height; i += group_width * group_height) {
            const int ix = tile_x0 + i % tile_width, iy = tile_y0 + i / tile_width;
            if (ix >= 0 && ix < (int)width && iy >= 0 && iy < (int)height) {
                __global const uchar* row = src + src_offset + (uint)iy * src_stride;
                tile[i] = aligned ? globalPixel(row, ix, SOURCE_ALIGNED)
                                  : globalPixel(row, ix, SOURCE_UNALIGNED);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= (int)width || y >= (int)height)
        return;

    const uchar4 own = vload4(x, src + src_offset + (uint)y * src_stride);
    ShiftPoint point = {x, y, convert_int3(own.xyz)};
    for (uint iter = 0; iter < max_iter; ++iter) {
        const Window window = clippedWindow(point, (int)sp, (int)width, (int)height);
        // A clipped window lies in the image, where the tile holds every pixel.
        const bool in_tile = tiled && window.minx >= tile_x0 && window.miny >= tile_y0 &&
                             window.maxx < tile_x0 + tile_width &&
                             window.maxy < tile_y0 + tile_height;
        WindowSum sum;
        if (in_tile)
            sum = windowSumPacked(SOURCE_LOCAL, src, src_offset, src_stride, tile, tile_x0,
                                  tile_y0, tile_width, window, point.colour, (int)sr2);
        else if (aligned)
            sum = windowSumPacked(SOURCE_ALIGNED, src, src_offset, src_stride, tile, 0, 0, 0,
                                  window, point.colour, (int)sr2);
        else
            sum = windowSumPacked(SOURCE_UNALIGNED, src, src_offset, src_stride, tile, 0, 0, 0,
                                  window, point.colour, (int)sr2);
        if (!shiftStep(&point, sum, (int)eps))
            break;
    }
    storePixel(dst, dst_offset, dst_stride, x, y, point.colour, own.w);
}

#ifdef __IMAGE_SUPPORT__
// image: baseline's loop with each window pixel one texel read (guide §6.2), CL_RGBA
// of CL_UNSIGNED_INT8: the texture cache serves the windows, which later iterations
// move around the pixel as no fixed local tile can follow. The window is clipped to the
// image, so the sampler never clamps. Reads (2 sp + 1)² texels per iteration.
__kernel void meanshift_image(__read_only image2d_t src, __global uchar* restrict dst, uint dst_offset,
                              uint dst_stride, uint width, uint height, uint sp, uint sr2, uint max_iter, uint eps)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= (int)width || y >= (int)height)
        return;
    const uint4 own = read_imageui(src, framecl_image_sampler, (int2)(x, y));
    ShiftPoint point = {x, y, convert_int3(own.xyz)};
    for (uint iter = 0; iter < max_iter; ++iter) {
        const Window window = clippedWindow(point, (int)sp, (int)width, (int)height);
        WindowSum sum = {0, 0, 0, (int3)(0)};
        for (int wy = window.miny; wy <= window.maxy; ++wy) {
            const int count_before = sum.count;
            for (int wx = window.minx; wx <= window.maxx; ++wx)
                accumulate(&sum, convert_int3(read_imageui(src, framecl_image_sampler, (int2)(wx, wy)).xyz), wx,
                           point.colour, (int)sr2);
            sum.sy += wy * (sum.count - count_before);
        }
        if (!shiftStep(&point, sum, (int)eps))
            break;
    }
    storePixel(dst, dst_offset, dst_stride, x, y, point.colour, (uchar)own.w);
}
#endif
