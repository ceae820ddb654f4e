#include <doctest/doctest.h>

#include "gpu/device_report.hpp"

using namespace framecl;
using namespace framecl::gpu;

namespace {

DeviceReport adreno()
{
    DeviceReport report;
    report.candidate = DeviceCandidate{nullptr, nullptr, "QUALCOMM Adreno(TM) 740", "QUALCOMM Snapdragon(TM)",
                                       DeviceType::Gpu};
    Capabilities& caps = report.capabilities;
    caps.name = report.candidate.name;
    caps.type = DeviceType::Gpu;
    caps.fp16 = true;
    caps.images = true;
    caps.recordable_queues = true;
    caps.command_buffer = true;
    caps.onchip_global_memory = true;
    caps.onchip_global_memory_size = 256 * 1024;
    caps.qcom_perf_hint = true;
    caps.qcom_priority_hint = true;
    caps.qcom_ion_host_ptr = true;
    caps.qcom_dmabuf_host_ptr = true;
    caps.global_cache_size = 128 * 1024;
    caps.global_cache_line_size = 64;
    caps.extensions = {"cl_khr_fp16", "cl_qcom_recordable_queues"};
    report.hints = chooseHints(caps, config::GpuConfig{});
    report.chosen = true;
    return report;
}

} // namespace

TEST_CASE("the recording path is qcom with recordable queues, else khr with command buffers, else off")
{
    DeviceReport report = adreno();
    CHECK(describeDevicesJson({report})["devices"][0]["recording"] == "qcom");
    report.capabilities.recordable_queues = false;
    CHECK(describeDevicesJson({report})["devices"][0]["recording"] == "khr");
    report.capabilities.command_buffer = false;
    CHECK(describeDevicesJson({report})["devices"][0]["recording"] == "off");
}

TEST_CASE("the JSON report lists extensions and dma-buf import paths as arrays")
{
    const auto device = describeDevicesJson({adreno()})["devices"][0];
    CHECK(device["extensions"] == nlohmann::json({"cl_khr_fp16", "cl_qcom_recordable_queues"}));
    CHECK(device["dma_buf_import"] == nlohmann::json({"cl_qcom_dmabuf_host_ptr", "cl_qcom_ion_host_ptr"}));
    CHECK(device["onchip_global_memory_size"] == 256 * 1024);
    CHECK(device["chosen"] == true);
    CHECK(device["hints"] == "priority: CL_CONTEXT_PRIORITY_HINT_QCOM=low; perf: CL_CONTEXT_PERF_HINT_QCOM=high");
}

TEST_CASE("the text report marks the chosen device and aligns its values")
{
    const std::string text = describeDevicesText({adreno()});
    INFO(text);
    CHECK(text.find("device 0: QUALCOMM Adreno(TM) 740  [chosen by gpu.device]\n") == 0);
    CHECK(text.find("\n  on-chip memory:      256 KiB\n") != std::string::npos);
    CHECK(text.find("\n  global cache:        128 KiB, 64-byte lines\n") != std::string::npos);
    CHECK(text.find("\n  recording:           qcom\n") != std::string::npos);
    CHECK(text.find("\n  dma-buf import:      cl_qcom_dmabuf_host_ptr, cl_qcom_ion_host_ptr\n") !=
          std::string::npos);
}

TEST_CASE("collected reports mark exactly the one device auto would choose")
{
    const auto reports = collectDeviceReports(config::GpuConfig{});
    REQUIRE_FALSE(reports.empty());
    int chosen = 0;
    for (const auto& report : reports)
        chosen += report.chosen;
    CHECK(chosen == 1);
    const auto json = describeDevicesJson(reports);
    CHECK(json["devices"].size() == reports.size());
}

TEST_CASE("each device's report says which clock its GPU work would be timed with, and why")
{
    DeviceReport report = adreno();
    report.clock = {gpu::Clock::Host, "the device's profiling timestamps are unusable: they are zero"};
    const std::string text = describeDevicesText({report});
    CHECK(text.find("\n  timing:              host clock (the device's profiling timestamps are unusable: they are "
                    "zero)\n") != std::string::npos);
    const auto device = describeDevicesJson({report})["devices"][0];
    CHECK(device["timing"] == "host");
    CHECK(device["timing_reason"] == report.clock.reason);
    // PoCL's own clock passes the check.
    for (const auto& collected : collectDeviceReports(config::GpuConfig{}))
        if (collected.candidate.platform_name.find("Portable Computing Language") != std::string::npos)
            CHECK_MESSAGE(collected.clock.device(), collected.clock.reason);
}
