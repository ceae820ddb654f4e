#include "scheduler/work_ahead.hpp"

#include <algorithm>
#include <utility>

namespace framecl::scheduler {

namespace {

constexpr uint64_t default_lead_ns = 500'000;

} // namespace

uint64_t feedLeadNs(double kernel_budget_ms)
{
    const double budget_ns = kernel_budget_ms * 1e6;
    return budget_ns > 0 ? std::min(default_lead_ns, uint64_t(budget_ns / 4)) : default_lead_ns;
}

WorkAhead::WorkAhead(std::vector<uint32_t> lane_ranks, uint64_t lead_ns)
    : lane_ranks_(std::move(lane_ranks)), lead_ns_(lead_ns)
{
}

uint64_t WorkAhead::add(const Part& part)
{
    parts_.push_back({next_serial_, part});
    return next_serial_++;
}

const WorkAhead::Part* WorkAhead::find(uint64_t serial) const
{
    const auto found = std::find_if(parts_.begin(), parts_.end(), [&](const Queued& q) { return q.serial == serial; });
    return found == parts_.end() ? nullptr : &found->part;
}

std::optional<WorkAhead::Ended> WorkAhead::complete(uint64_t serial, uint64_t ended_ns)
{
    const auto found = std::find_if(parts_.begin(), parts_.end(), [&](const Queued& q) { return q.serial == serial; });
    if (found == parts_.end())
        return std::nullopt;
    const Part part = found->part;
    parts_.erase(found);
    const uint64_t started_ns = std::max(part.enqueued_ns, last_end_ns_);
    last_end_ns_ = std::max(started_ns, ended_ns);
    return Ended{part, last_end_ns_ - started_ns};
}

std::vector<uint64_t> WorkAhead::otherParts(uint64_t frame, uint64_t serial) const
{
    std::vector<uint64_t> others;
    for (const Queued& q : parts_)
        if (q.part.frame == frame && q.serial != serial)
            others.push_back(q.serial);
    return others;
}

bool WorkAhead::busy(uint32_t rank) const
{
    return std::any_of(parts_.begin(), parts_.end(),
                       [&](const Queued& q) { return lane_ranks_.at(q.part.lane) <= rank; });
}

uint64_t WorkAhead::aheadNs(uint64_t now_ns, uint32_t rank) const
{
    uint64_t end = last_end_ns_;
    for (const Queued& q : parts_)
        if (lane_ranks_.at(q.part.lane) <= rank)
            end = std::max(std::max(end, q.part.enqueued_ns) + predictedNs(q.part), now_ns);
    return end > now_ns ? end - now_ns : 0;
}

uint32_t WorkAhead::laneFor(const std::vector<uint32_t>& lanes, uint64_t now_ns) const
{
    // As aheadNs() predicts the whole queue's end, per lane: a heavy client's tiles then
    // alternate, each next one starting in the tail of the one before
    // (gpu::GpuContext::lane), and a light client's part waits for the work of one lane.
    if (lanes.size() == 1)
        return lanes.front();
    std::vector<uint64_t> end(lane_ranks_.size(), 0);
    for (const Queued& q : parts_)
        end[q.part.lane] = std::max(end[q.part.lane], q.part.enqueued_ns) + predictedNs(q.part);
    uint32_t chosen = lanes.front();
    for (const uint32_t lane : lanes)
        if (std::max(end[lane], now_ns) < std::max(end[chosen], now_ns))
            chosen = lane;
    return chosen;
}

} // namespace framecl::scheduler
