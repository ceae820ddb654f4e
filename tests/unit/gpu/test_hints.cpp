#include <doctest/doctest.h>

#include <CL/cl_ext.h>

#include "gpu/hints.hpp"

using namespace framecl;
using namespace framecl::gpu;

namespace {

// The capability record of an Adreno device, as readCapabilities would fill it there.
Capabilities adrenoWithHints()
{
    Capabilities caps;
    caps.name = "QUALCOMM Adreno(TM) 740";
    caps.type = DeviceType::Gpu;
    caps.qcom_perf_hint = true;
    caps.qcom_priority_hint = true;
    return caps;
}

Capabilities khrPriorityOnly()
{
    Capabilities caps;
    caps.khr_priority_hints = true;
    return caps;
}

// The value following `key` in a key/value list; -1 when absent.
template <typename Property> long long valueOf(const std::vector<Property>& properties, Property key)
{
    for (size_t i = 0; i + 1 < properties.size(); i += 2)
        if (properties[i] == key)
            return static_cast<long long>(properties[i + 1]);
    return -1;
}

} // namespace

TEST_CASE("a device with both Qualcomm hints gets both as context properties")
{
    config::GpuConfig config;
    config.perf_hint = config::PerfHint::High;
    config.priority_hint = config::PriorityHint::Low;
    const HintPlan plan = chooseHints(adrenoWithHints(), config);

    CHECK(plan.context_properties.size() == 4);
    CHECK(valueOf<cl_context_properties>(plan.context_properties, 0x40C2) == 0x40C3); // perf: high
    CHECK(valueOf<cl_context_properties>(plan.context_properties, 0x40C9) == 0x40CC); // priority: low
    CHECK(valueOf<cl_queue_properties>(plan.queue_properties, CL_QUEUE_PRIORITY_KHR) == -1);
    CHECK(plan.description == "priority: CL_CONTEXT_PRIORITY_HINT_QCOM=low; perf: CL_CONTEXT_PERF_HINT_QCOM=high");
}

TEST_CASE("the Qualcomm hint values follow the configured levels")
{
    struct Level {
        config::PerfHint perf;
        config::PriorityHint priority;
        long long perf_value, priority_value;
    };
    for (const Level level : {Level{config::PerfHint::High, config::PriorityHint::High, 0x40C3, 0x40CA},
                              Level{config::PerfHint::Normal, config::PriorityHint::Normal, 0x40C4, 0x40CB},
                              Level{config::PerfHint::Low, config::PriorityHint::Low, 0x40C5, 0x40CC}}) {
        config::GpuConfig config;
        config.perf_hint = level.perf;
        config.priority_hint = level.priority;
        const HintPlan plan = chooseHints(adrenoWithHints(), config);
        CHECK(valueOf<cl_context_properties>(plan.context_properties, 0x40C2) == level.perf_value);
        CHECK(valueOf<cl_context_properties>(plan.context_properties, 0x40C9) == level.priority_value);
    }
}

TEST_CASE("a device with only cl_khr_priority_hints gets the priority on the queue")
{
    config::GpuConfig config;
    config.priority_hint = config::PriorityHint::Low;
    const HintPlan plan = chooseHints(khrPriorityOnly(), config);

    CHECK(plan.context_properties.empty());
    CHECK(valueOf<cl_queue_properties>(plan.queue_properties, CL_QUEUE_PRIORITY_KHR) == CL_QUEUE_PRIORITY_LOW_KHR);
    CHECK(plan.description == "priority: CL_QUEUE_PRIORITY_KHR=low; perf: none");
    CHECK(plan.lane_level == config::PriorityHint::Low);
}

TEST_CASE("a lane for a client class carries its own khr priority and the daemon's other queue properties")
{
    config::GpuConfig config;
    config.priority_hint = config::PriorityHint::Low;
    const HintPlan plan = chooseHints(khrPriorityOnly(), config);
    const std::vector<cl_queue_properties> high = priorityLaneProperties(plan, config::PriorityHint::High);
    CHECK(high.size() == 4);
    CHECK(valueOf<cl_queue_properties>(high, CL_QUEUE_PRIORITY_KHR) == CL_QUEUE_PRIORITY_HIGH_KHR);
    CHECK(valueOf<cl_queue_properties>(high, CL_QUEUE_PROPERTIES) == CL_QUEUE_PROFILING_ENABLE);
}

TEST_CASE("the khr queue priority maps high, normal and low to HIGH, MED and LOW")
{
    config::GpuConfig config;
    config.priority_hint = config::PriorityHint::High;
    CHECK(valueOf<cl_queue_properties>(chooseHints(khrPriorityOnly(), config).queue_properties,
                                       CL_QUEUE_PRIORITY_KHR) == CL_QUEUE_PRIORITY_HIGH_KHR);
    config.priority_hint = config::PriorityHint::Normal;
    CHECK(valueOf<cl_queue_properties>(chooseHints(khrPriorityOnly(), config).queue_properties,
                                       CL_QUEUE_PRIORITY_KHR) == CL_QUEUE_PRIORITY_MED_KHR);
}

TEST_CASE("the Qualcomm priority hint wins over cl_khr_priority_hints")
{
    Capabilities caps = adrenoWithHints();
    caps.khr_priority_hints = true;
    const HintPlan plan = chooseHints(caps, config::GpuConfig{});
    CHECK(valueOf<cl_context_properties>(plan.context_properties, 0x40C9) != -1);
    CHECK(valueOf<cl_queue_properties>(plan.queue_properties, CL_QUEUE_PRIORITY_KHR) == -1);
    // The daemon's lanes then sit at the khr default, which client classes rank against.
    CHECK(plan.lane_level == config::PriorityHint::Normal);
}

TEST_CASE("a device without hint extensions gets no hints and the description says why")
{
    const HintPlan plan = chooseHints(Capabilities{}, config::GpuConfig{});
    CHECK(plan.context_properties.empty());
    CHECK(valueOf<cl_queue_properties>(plan.queue_properties, CL_QUEUE_PRIORITY_KHR) == -1);
    CHECK_FALSE(plan.lane_level.has_value());
    CHECK(plan.description ==
          "priority: none (device offers neither cl_qcom_priority_hint nor cl_khr_priority_hints); perf: none");
}

TEST_CASE("the queue is always in order with profiling on")
{
    for (const Capabilities& caps : {Capabilities{}, khrPriorityOnly(), adrenoWithHints()}) {
        const HintPlan plan = chooseHints(caps, config::GpuConfig{});
        CHECK(valueOf<cl_queue_properties>(plan.queue_properties, CL_QUEUE_PROPERTIES) ==
              CL_QUEUE_PROFILING_ENABLE);
    }
}
