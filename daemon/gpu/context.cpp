#include "gpu/context.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "gpu/cl_error.hpp"

namespace framecl::gpu {
namespace {

// Asynchronous errors the driver reports against the context (may run on a driver
// thread; spdlog loggers are thread safe).
void CL_CALLBACK onContextError(const char* message, const void*, size_t, void*)
{
    log::get("gpu")->error("OpenCL context error: {}", message);
}

} // namespace

GpuContext::GpuContext(DeviceCandidate candidate, Capabilities caps, VendorEntryPoints vendor,
                       HintPlan hints, cl::Context context, std::vector<cl::CommandQueue> lanes,
                       std::vector<PriorityLane> priority_lanes, ClockChoice clock)
    : candidate_(std::move(candidate)), caps_(std::move(caps)), vendor_(vendor),
      hints_(std::move(hints)), context_(std::move(context)), lanes_(std::move(lanes)),
      default_lanes_(uint32_t(lanes_.size())), clock_(std::move(clock))
{
    for (PriorityLane& lane : priority_lanes) {
        lanes_.push_back(std::move(lane.queue));
        priority_levels_.push_back(lane.level);
    }
}

std::optional<uint32_t> GpuContext::priorityLane(config::PriorityHint level) const
{
    for (uint32_t i = 0; i < priority_levels_.size(); ++i)
        if (priority_levels_[i] == level)
            return default_lanes_ + i;
    return std::nullopt;
}

uint32_t GpuContext::laneRank(uint32_t lane) const
{
    if (!hints_.lane_level)
        return 0;
    return priorityRank(lane < default_lanes_ ? *hints_.lane_level : priority_levels_.at(lane - default_lanes_));
}

std::optional<ProfiledSpan> GpuContext::profiledSpan(const cl::Event& event) const
{
    if (!clock_.device())
        return std::nullopt;
    cl_ulong start = 0, end = 0;
    if (event.getProfilingInfo(CL_PROFILING_COMMAND_START, &start) != CL_SUCCESS ||
        event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) != CL_SUCCESS || end < start || end == 0)
        return std::nullopt;
    return ProfiledSpan{start, end};
}

uint32_t priorityRank(config::PriorityHint level)
{
    switch (level) {
    case config::PriorityHint::High:
        return 0;
    case config::PriorityHint::Normal:
        return 1;
    case config::PriorityHint::Low:
        break;
    }
    return 2;
}

cl_int GpuContext::finishAll() const
{
    cl_int first = CL_SUCCESS;
    for (const cl::CommandQueue& lane : lanes_)
        if (const cl_int err = clFinish(lane()); err != CL_SUCCESS && first == CL_SUCCESS)
            first = err;
    return first;
}

Result<std::unique_ptr<GpuContext>> openGpu(const DeviceCandidate& candidate, Capabilities caps,
                                            VendorEntryPoints vendor, const config::GpuConfig& config)
{
    HintPlan hints = chooseHints(caps, config);
    const std::string object = "device '" + candidate.name + "'";

    std::vector<cl_context_properties> context_properties = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(candidate.platform)};
    context_properties.insert(context_properties.end(), hints.context_properties.begin(),
                              hints.context_properties.end());
    context_properties.push_back(0);

    // Through the table: the Qualcomm hints are context properties (guide §9.1.1).
    cl_int err = CL_SUCCESS;
    cl_context raw_context = vendor.clCreateContext(context_properties.data(), 1, &candidate.device,
                                                    onContextError, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateContext", err, object) + " with hints " + hints.description);
    cl::Context context(raw_context); // owns the handle from here on

    std::vector<cl_queue_properties> queue_properties = hints.queue_properties;
    queue_properties.push_back(0);
    std::vector<cl::CommandQueue> lanes;
    for (uint32_t lane = 0; lane < std::max<uint32_t>(config.lanes, 1); ++lane) {
        cl_command_queue raw_queue = vendor.clCreateCommandQueueWithProperties(context(), candidate.device,
                                                                               queue_properties.data(), &err);
        if (err != CL_SUCCESS)
            return fail(clFailure("clCreateCommandQueueWithProperties", err, object) + " with hints " +
                        hints.description);
        lanes.emplace_back(raw_queue); // owns the handle from here on
    }
    // A lane at each other level, for the client classes that ask for one (any may be
    // configured by a reload, so all are opened: an idle queue costs nothing).
    std::vector<GpuContext::PriorityLane> priority_lanes;
    std::string levels;
    for (const config::PriorityHint level :
         {config::PriorityHint::High, config::PriorityHint::Normal, config::PriorityHint::Low}) {
        if (!hints.lane_level || level == *hints.lane_level)
            continue;
        std::vector<cl_queue_properties> properties = priorityLaneProperties(hints, level);
        properties.push_back(0);
        cl_command_queue raw_queue =
            vendor.clCreateCommandQueueWithProperties(context(), candidate.device, properties.data(), &err);
        if (err != CL_SUCCESS)
            return fail(clFailure("clCreateCommandQueueWithProperties", err, object) + " at priority " +
                        levelName(level));
        priority_lanes.push_back({level, cl::CommandQueue(raw_queue)});
        levels += std::string(levels.empty() ? "" : ", ") + levelName(level);
    }

    auto logger = log::get("gpu");
    logger->info("device '{}' ({}, {}, {}, driver {})", candidate.name, candidate.platform_name,
                 deviceTypeName(caps.type), caps.opencl_version, caps.driver_version);
    logger->info("hints: {}", hints.description);
    if (hints.lane_level)
        logger->info("lanes: {} at {}, one for client classes at each of {}", lanes.size(),
                     levelName(*hints.lane_level), levels);
    ClockChoice clock = chooseClock(context, lanes.front(), config.timestamps);
    if (clock.device())
        logger->info("timing: device clock ({})", clock.reason);
    else
        logger->warn("timing: host clock around clFinish, no per-dispatch times ({})", clock.reason);

    return std::make_unique<GpuContext>(candidate, std::move(caps), vendor, std::move(hints),
                                        std::move(context), std::move(lanes), std::move(priority_lanes),
                                        std::move(clock));
}

Result<std::unique_ptr<GpuContext>> openGpu(const config::GpuConfig& config,
                                            std::optional<VendorEntryPoints> vendor)
{
    const std::vector<DeviceCandidate> candidates = enumerateDevices();
    auto chosen = chooseDevice(candidates, config.device);
    if (!chosen)
        return tl::unexpected(chosen.error());
    const DeviceCandidate& candidate = candidates[*chosen];
    return openGpu(candidate, readCapabilities(candidate.device),
                   vendor ? *vendor : resolveVendorEntryPoints(candidate.platform), config);
}

} // namespace framecl::gpu
