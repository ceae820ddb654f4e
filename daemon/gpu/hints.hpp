#pragma once
// Which power and priority hints the context and queue are created with, chosen from
// the device's capabilities and the `gpu` config section. Pure, so tests run it
// against capability records of devices they do not have.

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
    // Key/value pairs for clCreateCommandQueueWithProperties, without the terminating 0.
    std::vector<cl_queue_properties> queue_properties;
    // The one log line saying which hint took effect, e.g.
    // "priority: CL_CONTEXT_PRIORITY_HINT_QCOM=low; perf: CL_CONTEXT_PERF_HINT_QCOM=high".
    std::string description;
};

// Guide §9.1.1/§9.1.2: the Qualcomm context hints where the device offers them; else
// the priority through cl_khr_priority_hints on the queue; else none. The queue is
// always in order (guide §5.7.5) with profiling on (guide §4.5.2).
HintPlan chooseHints(const Capabilities& caps, const config::GpuConfig& config);

// The CL_PERF_HINT_*_QCOM value of `hint`, for the context and clSetPerfHintQCOM.
cl_uint qcomPerfHint(config::PerfHint hint);
// "high", "normal", "low".
const char* levelName(config::PerfHint hint);

} // namespace framecl::gpu
