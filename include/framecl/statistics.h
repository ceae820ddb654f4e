/* framecl frame statistics: what a camera's auto-white-balance and auto-exposure loops
 * read of each frame, as a stage of its pipeline computes them (the `bayer` plugin with
 * statistics = true; docs/filters.md, "Statistics"). The same layout is the device
 * buffer a plugin's kernel accumulates into (plugin.h, FRAMECL_ARG_STATISTICS) and what
 * a client reads with framecl_done_statistics(). */
#ifndef FRAMECL_STATISTICS_H
#define FRAMECL_STATISTICS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FRAMECL_STATISTICS_ZONES_X 16
#define FRAMECL_STATISTICS_ZONES_Y 12
#define FRAMECL_STATISTICS_BINS 256

enum framecl_statistics_colour { FRAMECL_STATISTICS_R = 0, FRAMECL_STATISTICS_G = 1, FRAMECL_STATISTICS_B = 2 };

/* Every field a 32-bit count, zone rows top to bottom, zones left to right in a row. */
struct framecl_statistics {
    /* Per zone and colour: the sum of the samples counted, and how many were counted. */
    uint32_t sums[FRAMECL_STATISTICS_ZONES_Y][FRAMECL_STATISTICS_ZONES_X][3];
    uint32_t counts[FRAMECL_STATISTICS_ZONES_Y][FRAMECL_STATISTICS_ZONES_X][3];
    /* Luma, every pixel (or 2x2 block) of the frame in one bin. */
    uint32_t histogram[FRAMECL_STATISTICS_BINS];
};

#ifdef __cplusplus
}
#endif

#endif
