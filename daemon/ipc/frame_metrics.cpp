#include "ipc/frame_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace framecl::ipc {

void FrameMetrics::add(uint64_t end_ns, uint64_t latency_ns)
{
    ring_[next_] = {end_ns, latency_ns};
    next_ = (next_ + 1) % capacity;
    count_ = std::min(count_ + 1, capacity);
}

LatencySummary FrameMetrics::latency() const
{
    if (count_ == 0)
        return {};
    std::vector<uint64_t> sorted;
    sorted.reserve(count_);
    for (size_t i = 0; i < count_; ++i)
        sorted.push_back(ring_[i].latency_ns);
    std::sort(sorted.begin(), sorted.end());
    // Nearest rank: the smallest value with at least p of the samples at or below it.
    const auto rank = [&](double p) {
        const size_t r = size_t(std::max<double>(1.0, std::ceil(p * double(count_))));
        return double(sorted[r - 1]) / 1e6;
    };
    return {rank(0.50), rank(0.99), double(sorted.back()) / 1e6};
}

double FrameMetrics::fps(uint64_t now_ns, uint64_t window_ns) const
{
    uint64_t first = UINT64_MAX, last = 0;
    size_t frames = 0;
    for (size_t i = 0; i < count_; ++i) {
        const uint64_t end = ring_[i].end_ns;
        if (end > now_ns || now_ns - end > window_ns)
            continue;
        first = std::min(first, end);
        last = std::max(last, end);
        ++frames;
    }
    if (frames < 2 || last == first)
        return 0;
    return double(frames - 1) * 1e9 / double(last - first);
}

} // namespace framecl::ipc
