#include "gpu/hints.hpp"

#include <CL/cl_ext.h>

#include "gpu/vendor_extensions.hpp"

namespace framecl::gpu {
namespace {

// PerfHint and PriorityHint share their three levels.
template <typename Level> const char* nameOf(Level level)
{
    switch (level) {
    case Level::High:
        return "high";
    case Level::Normal:
        return "normal";
    case Level::Low:
        break;
    }
    return "low";
}

} // namespace

cl_uint qcomPerfHint(config::PerfHint hint)
{
    switch (hint) {
    case config::PerfHint::High:
        return CL_PERF_HINT_HIGH_QCOM;
    case config::PerfHint::Normal:
        return CL_PERF_HINT_NORMAL_QCOM;
    case config::PerfHint::Low:
        break;
    }
    return CL_PERF_HINT_LOW_QCOM;
}

const char* levelName(config::PerfHint hint)
{
    return nameOf(hint);
}

const char* levelName(config::PriorityHint hint)
{
    return nameOf(hint);
}

namespace {

cl_context_properties qcomPriorityHint(config::PriorityHint hint)
{
    switch (hint) {
    case config::PriorityHint::High:
        return CL_PRIORITY_HINT_HIGH_QCOM;
    case config::PriorityHint::Normal:
        return CL_PRIORITY_HINT_NORMAL_QCOM;
    case config::PriorityHint::Low:
        break;
    }
    return CL_PRIORITY_HINT_LOW_QCOM;
}

cl_queue_properties khrQueuePriority(config::PriorityHint hint)
{
    switch (hint) {
    case config::PriorityHint::High:
        return CL_QUEUE_PRIORITY_HIGH_KHR;
    case config::PriorityHint::Normal:
        return CL_QUEUE_PRIORITY_MED_KHR;
    case config::PriorityHint::Low:
        break;
    }
    return CL_QUEUE_PRIORITY_LOW_KHR;
}

} // namespace

HintPlan chooseHints(const Capabilities& caps, const config::GpuConfig& config)
{
    HintPlan plan;
    // Guide §5.7.5: in-order queues are what Adreno pipelines best; §4.5.2: profiling
    // gives the kernel times the scheduler budgets with.
    plan.queue_properties = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE};

    std::string priority;
    if (caps.qcom_priority_hint) {
        plan.context_properties.push_back(CL_CONTEXT_PRIORITY_HINT_QCOM);
        plan.context_properties.push_back(qcomPriorityHint(config.priority_hint));
        priority = std::string("CL_CONTEXT_PRIORITY_HINT_QCOM=") + nameOf(config.priority_hint);
        if (caps.khr_priority_hints)
            plan.lane_level = config::PriorityHint::Normal; // no queue property: the khr default
    } else if (caps.khr_priority_hints) {
        plan.queue_properties.push_back(CL_QUEUE_PRIORITY_KHR);
        plan.queue_properties.push_back(khrQueuePriority(config.priority_hint));
        priority = std::string("CL_QUEUE_PRIORITY_KHR=") + nameOf(config.priority_hint);
        plan.lane_level = config.priority_hint;
    } else {
        priority = "none (device offers neither cl_qcom_priority_hint nor cl_khr_priority_hints)";
    }

    std::string perf = "none";
    if (caps.qcom_perf_hint) {
        plan.context_properties.push_back(CL_CONTEXT_PERF_HINT_QCOM);
        plan.context_properties.push_back(qcomPerfHint(config.perf_hint));
        perf = std::string("CL_CONTEXT_PERF_HINT_QCOM=") + levelName(config.perf_hint);
    }

    plan.description = "priority: " + priority + "; perf: " + perf;
    return plan;
}

std::vector<cl_queue_properties> priorityLaneProperties(const HintPlan& plan, config::PriorityHint level)
{
    std::vector<cl_queue_properties> properties;
    for (size_t i = 0; i + 1 < plan.queue_properties.size(); i += 2)
        if (plan.queue_properties[i] != CL_QUEUE_PRIORITY_KHR)
            properties.insert(properties.end(), {plan.queue_properties[i], plan.queue_properties[i + 1]});
    properties.insert(properties.end(), {CL_QUEUE_PRIORITY_KHR, khrQueuePriority(level)});
    return properties;
}

} // namespace framecl::gpu
