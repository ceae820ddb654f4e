#pragma once
// Which power and priority hints the context and queue are created with, chosen from
// the device's capabilities and the `gpu` config section. Pure, so tests run it
// against capability records of devices they do not have.

#include <optional>
#include <string>
#include <vector>

#include <CL/cl.h>

#include "config/config.hpp"
#include "gpu/capabilities.hpp"

namespace framecl::gpu {

struct HintPlan {
    // Key/value pairs for clCreateContext, without CL_CONTEXT_PLATFORM and without the
    // terminating 0 (openGpu adds both).
    std::vector<cl_context_properties> context_properties;
    // Key/value pairs for clCreateCommandQueueWithProperties of the daemon's lanes,
    // without the terminating 0.
    std::vector<cl_queue_properties> queue_properties;
    // Where the device takes a priority per queue (cl_khr_priority_hints): the level of
    // the daemon's lanes, which a client class's gpu_priority is ranked against. It is
    // gpu.priority_hint where the queue carries the daemon's priority, and normal (the
    // khr default) where the context does (cl_qcom_priority_hint). None: one level.
    std::optional<config::PriorityHint> lane_level;
    // The one log line saying which hint took effect, e.g.
    // "priority: CL_CONTEXT_PRIORITY_HINT_QCOM=low; perf: CL_CONTEXT_PERF_HINT_QCOM=high".
    std::string description;
};

// Guide §9.1.1/§9.1.2: the Qualcomm context hints where the device offers them; else
// the priority through cl_khr_priority_hints on the queue; else none. Where the device
// offers cl_khr_priority_hints, lanes at other levels can be opened for client classes
// (lane_level). The queue is
// always in order (guide §5.7.5) with profiling on (guide §4.5.2).
HintPlan chooseHints(const Capabilities& caps, const config::GpuConfig& config);

// The properties of a lane opened at `level` for a client class: the daemon's lanes'
// with CL_QUEUE_PRIORITY_KHR at `level`, without the terminating 0. Only where
// `plan.lane_level` is set.
std::vector<cl_queue_properties> priorityLaneProperties(const HintPlan& plan, config::PriorityHint level);

// The CL_PERF_HINT_*_QCOM value of `hint`, for the context and clSetPerfHintQCOM.
cl_uint qcomPerfHint(config::PerfHint hint);
// "high", "normal", "low".
const char* levelName(config::PerfHint hint);
const char* levelName(config::PriorityHint hint);

} // namespace framecl::gpu
