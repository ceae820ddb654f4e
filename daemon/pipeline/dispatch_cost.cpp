#include "pipeline/dispatch_cost.hpp"

#include <algorithm>

namespace framecl::pipeline {

void DispatchCost::learn(double measured)
{
    if (!(measured > 0))
        return; // a dispatch too short for the device clock tells nothing
    ns_per_item = ns_per_item > 0 ? ns_per_item + cost_smoothing * (measured - ns_per_item) : measured;
}

bool DispatchCost::drifted() const
{
    if (planned_ns_per_item <= 0)
        return ns_per_item > 0;
    return ns_per_item > cost_drift * planned_ns_per_item || ns_per_item * cost_drift < planned_ns_per_item;
}

bool DispatchCost::noteOverrun(bool overran, double measured)
{
    if (!overran) {
        overrun_streak_ = 0;
        return false;
    }
    streak_least_ = overrun_streak_ == 0 ? measured : std::min(streak_least_, measured);
    if (++overrun_streak_ < overruns_to_replan)
        return false;
    overrun_streak_ = 0;
    ns_per_item = std::max(ns_per_item, streak_least_);
    return true;
}

double DispatchCost::perItem(uint64_t ns, uint64_t tiles, uint64_t items) const
{
    const double work_ns = double(ns) - fixed_ns * double(tiles);
    return items > 0 && work_ns > 0 ? work_ns / double(items) : 0;
}

CostFit fitCost(uint64_t short_items, uint64_t short_ns, uint64_t long_items, uint64_t long_ns)
{
    const CostFit proportional{0, long_items > 0 ? double(long_ns) / double(long_items) : 0};
    if (long_items <= short_items || long_ns <= short_ns)
        return proportional;
    const double slope = double(long_ns - short_ns) / double(long_items - short_items);
    const double intercept = double(short_ns) - slope * double(short_items);
    return intercept > 0 ? CostFit{intercept, slope} : proportional;
}

} // namespace framecl::pipeline
