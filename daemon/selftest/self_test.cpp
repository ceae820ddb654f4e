// framecld --self-test (self_test.hpp): the device opened with the self-test's own
// pipelines in place of the configured ones, then each group of checks in turn.
#include "selftest/self_test.hpp"

#include <exception>

#include <fmt/format.h>

#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "pipeline/engine.hpp"
#include "reference/reference_box.hpp"
#include "selftest/checks.hpp"

namespace framecl::selftest {

std::string filterPipelineName(size_t case_index)
{
    return fmt::format("self-test-filter-{}", case_index + 1);
}

std::string selfTestPipelines(const std::vector<FilterCase>& cases)
{
    // Only these: the configured pipeline directories are not read.
    std::string toml = fmt::format(R"([daemon]
pipeline_dirs = []

[[pipeline]]
name = "{}"
stages = [ {{ plugin = "box", width = 3, height = 3 }},
           {{ plugin = "box", width = 5, height = 5, border = "reflect101" }} ]
)",
                                   recording_pipeline);
    for (size_t c = 0; c < cases.size(); ++c)
        toml += fmt::format("\n[[pipeline]]\nname = \"{}\"\nstages = [ {} ]\n", filterPipelineName(c), cases[c].stages);
    return toml;
}

PackedFrame recordingReference(const PackedFrame& input, const pipeline::FrameShape& shape)
{
    const int width = int(shape.width), height = int(shape.height);
    const auto boxed = reference::boxFilter(input, width, height, 1, {3, 3, reference::Border::Replicate, 0});
    return reference::boxFilter(boxed, width, height, 1, {5, 5, reference::Border::Reflect101, 0});
}

Report runSelfTest(const config::Config& config)
{
    Report report;
    report.device = config.gpu.device;
    auto parsed = config::parseConfig(selfTestPipelines(filterCases()), "self-test pipelines", config::defaultPaths());
    if (!parsed) {
        report.checks.push_back({"self-test", "pipelines", Outcome::Failed, parsed.error().joined()});
        return report;
    }
    config::Config tested = config;
    tested.pipelines = std::move(parsed->pipelines);
    auto engine = pipeline::startEngine(tested);
    if (!engine) {
        report.checks.push_back({"device", "open", Outcome::Failed, engine.error().message});
        return report;
    }
    const gpu::GpuContext& gpu = *engine->gpu;
    const gpu::Capabilities& caps = gpu.capabilities();
    report.device = fmt::format("{} ({}, {}, driver {})", caps.name, gpu.candidate().platform_name,
                                caps.opencl_version, caps.driver_version);
    report.checks.push_back({"device", "open", Outcome::Passed,
                             fmt::format("{} compute units, {} MiB", caps.max_compute_units,
                                         caps.global_mem_size >> 20)});

    const SelfTestDevice device{tested, gpu, engine->pipelines.catalog};
    for (const auto check : {checkDevice, checkImports, checkRecordings, checkFilters, probeFairness}) {
        try {
            check(device, report.checks);
        } catch (const std::exception& e) {
            // A check that throws (an allocation, the OpenCL C++ bindings) fails alone.
            report.checks.push_back({"self-test", "exception", Outcome::Failed, e.what()});
        }
    }
    return report;
}

} // namespace framecl::selftest
