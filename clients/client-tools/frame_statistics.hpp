#pragma once
// A frame's statistics (framecl/statistics.h) as the tools print them: the whole
// frame's mean R, G and B below saturation, the share of samples that were below it,
// and the luma histogram's median and top bin.

#include <string>

#include <framecl/statistics.h>

namespace framecl::cli {

struct StatisticsSummary {
    double mean[3] = {0, 0, 0}; // R, G, B: the frame's sums over its counts (0 where none)
    double counted = 0;         // the share of samples below saturation, 0 to 1
    unsigned median_bin = 0;    // of the luma histogram
    double top_bin = 0;         // the share of blocks in bin 255
};

StatisticsSummary summarize(const framecl_statistics& statistics);

// "mean R 81.2 G 140.9 B 66.0 (99.7% of samples below saturation), luma median bin
// 97, 0.1% of blocks in bin 255"
std::string statisticsText(const framecl_statistics& statistics);

} // namespace framecl::cli
