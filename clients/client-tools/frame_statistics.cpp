#include "frame_statistics.hpp"

#include <fmt/format.h>

namespace framecl::cli {

StatisticsSummary summarize(const framecl_statistics& statistics)
{
    StatisticsSummary summary;
    uint64_t sums[3] = {}, counts[3] = {}, counted = 0, blocks = 0;
    for (uint32_t zy = 0; zy < FRAMECL_STATISTICS_ZONES_Y; ++zy)
        for (uint32_t zx = 0; zx < FRAMECL_STATISTICS_ZONES_X; ++zx)
            for (int c = 0; c < 3; ++c) {
                sums[c] += statistics.sums[zy][zx][c];
                counts[c] += statistics.counts[zy][zx][c];
            }
    for (int c = 0; c < 3; ++c) {
        summary.mean[c] = counts[c] ? double(sums[c]) / double(counts[c]) : 0.0;
        counted += counts[c];
    }
    for (uint32_t bin = 0; bin < FRAMECL_STATISTICS_BINS; ++bin)
        blocks += statistics.histogram[bin];
    // Each 2x2 block has four samples.
    summary.counted = blocks ? double(counted) / double(4 * blocks) : 0.0;
    uint64_t below = 0;
    for (uint32_t bin = 0; bin < FRAMECL_STATISTICS_BINS; ++bin) {
        below += statistics.histogram[bin];
        if (2 * below >= blocks) {
            summary.median_bin = bin;
            break;
        }
    }
    summary.top_bin = blocks ? double(statistics.histogram[FRAMECL_STATISTICS_BINS - 1]) / double(blocks) : 0.0;
    return summary;
}

std::string statisticsText(const framecl_statistics& statistics)
{
    const StatisticsSummary s = summarize(statistics);
    return fmt::format("mean R {:.1f} G {:.1f} B {:.1f} ({:.1f}% of samples below saturation), luma median bin {}, "
                       "{:.1f}% of blocks in bin 255",
                       s.mean[0], s.mean[1], s.mean[2], 100 * s.counted, s.median_bin, 100 * s.top_bin);
}

} // namespace framecl::cli
