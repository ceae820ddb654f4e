#include "gpu/device_report.hpp"

#include <iterator>

#include <fmt/format.h>

#include "gpu/replay.hpp"

namespace framecl::gpu {
namespace {

// The recording path the pipeline takes under `gpu.recording = "auto"`: the Qualcomm
// recordable queues (guide §9.1.3), else the Khronos command buffers, else none.
const char* recordingPath(const Capabilities& caps)
{
    return recordingModeName(chooseRecordingMode(caps, config::RecordingMode::Auto));
}

std::vector<std::string> dmaBufImportPaths(const Capabilities& caps)
{
    std::vector<std::string> paths;
    if (caps.qcom_dmabuf_host_ptr)
        paths.emplace_back("cl_qcom_dmabuf_host_ptr");
    if (caps.qcom_ion_host_ptr)
        paths.emplace_back("cl_qcom_ion_host_ptr");
    if (caps.khr_external_memory_dma_buf)
        paths.emplace_back("cl_khr_external_memory_dma_buf");
    return paths;
}

std::vector<std::string> priorityHints(const Capabilities& caps)
{
    std::vector<std::string> hints;
    if (caps.qcom_priority_hint)
        hints.emplace_back("cl_qcom_priority_hint");
    if (caps.khr_priority_hints)
        hints.emplace_back("cl_khr_priority_hints");
    return hints;
}

std::string listOrNone(const std::vector<std::string>& items, const char* separator = ", ")
{
    return items.empty() ? "none" : fmt::format("{}", fmt::join(items, separator));
}

const char* yesNo(bool value)
{
    return value ? "yes" : "no";
}

std::string bytes(uint64_t count)
{
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(count);
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
        value /= 1024.0;
        ++unit;
    }
    return fmt::format("{:.{}f} {}", value, value == static_cast<uint64_t>(value) ? 0 : 1, kUnits[unit]);
}

void appendDevice(std::string& out, size_t index, const DeviceReport& report)
{
    const Capabilities& caps = report.capabilities;
    out += fmt::format("device {}: {}{}\n", index, report.candidate.name,
                       report.chosen ? "  [chosen by gpu.device]" : "");
    auto line = [&out](const char* key, const std::string& value) {
        out += fmt::format("  {:<20} {}\n", std::string(key) + ":", value);
    };
    line("platform", report.candidate.platform_name);
    line("type", deviceTypeName(caps.type));
    line("vendor", caps.vendor);
    line("driver", caps.driver_version);
    line("opencl", caps.opencl_version);
    line("fp16", yesNo(caps.fp16));
    line("images", !caps.images ? "no"
                   : caps.image_pitch_alignment
                       ? fmt::format("yes (from-buffer pitch alignment {} px)", caps.image_pitch_alignment)
                       : "yes");
    line("unified memory", yesNo(caps.unified_memory));
    line("command buffers", caps.command_buffer
                                ? fmt::format("yes (mutable dispatch: {})", yesNo(caps.command_buffer_mutable_dispatch))
                                : "no");
    line("recordable queues", !caps.recordable_queues ? "no"
                              : caps.recordable_queue_max_size
                                  ? fmt::format("yes (max {} dispatches)", caps.recordable_queue_max_size)
                                  : "yes");
    line("on-chip memory", caps.onchip_global_memory ? bytes(caps.onchip_global_memory_size) : "none");
    line("priority hints", listOrNone(priorityHints(caps)));
    line("perf hint", caps.qcom_perf_hint ? "cl_qcom_perf_hint" : "none");
    line("dma-buf import", listOrNone(dmaBufImportPaths(caps)));
    line("subgroups", yesNo(caps.subgroups));
    line("compute units", std::to_string(caps.max_compute_units));
    line("max work-group size", std::to_string(caps.max_work_group_size));
    line("global memory", fmt::format("{} (max allocation {})", bytes(caps.global_mem_size),
                                      bytes(caps.max_alloc_size)));
    line("global cache", fmt::format("{}, {}-byte lines", bytes(caps.global_cache_size),
                                     caps.global_cache_line_size));
    line("local memory", bytes(caps.local_mem_size));
    line("recording", recordingPath(caps));
    line("timing", fmt::format("{} clock ({})", clockName(report.clock.clock), report.clock.reason));
    line("hints", report.hints.description);
    line("extensions", listOrNone(caps.extensions, " "));
}

} // namespace

std::vector<DeviceReport> collectDeviceReports(const config::GpuConfig& config)
{
    std::vector<DeviceCandidate> candidates = enumerateDevices();
    const auto chosen = chooseDevice(candidates, config.device);
    std::vector<DeviceReport> reports;
    for (size_t i = 0; i < candidates.size(); ++i) {
        Capabilities caps = readCapabilities(candidates[i].device);
        HintPlan hints = chooseHints(caps, config);
        ClockChoice clock = chooseClock(candidates[i].platform, candidates[i].device, config.timestamps);
        reports.push_back({std::move(candidates[i]), std::move(caps), std::move(hints), std::move(clock),
                           chosen.has_value() && *chosen == i});
    }
    return reports;
}

std::string describeDevicesText(const std::vector<DeviceReport>& reports)
{
    if (reports.empty())
        return "no OpenCL device found\n";
    std::string out;
    for (size_t i = 0; i < reports.size(); ++i) {
        if (i > 0)
            out += "\n";
        appendDevice(out, i, reports[i]);
    }
    return out;
}

nlohmann::json describeDevicesJson(const std::vector<DeviceReport>& reports)
{
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceReport& report : reports) {
        const Capabilities& caps = report.capabilities;
        devices.push_back({
            {"name", report.candidate.name},
            {"platform", report.candidate.platform_name},
            {"type", deviceTypeName(caps.type)},
            {"chosen", report.chosen},
            {"vendor", caps.vendor},
            {"driver", caps.driver_version},
            {"opencl_version", caps.opencl_version},
            {"fp16", caps.fp16},
            {"images", caps.images},
            {"image_pitch_alignment", caps.image_pitch_alignment},
            {"unified_memory", caps.unified_memory},
            {"command_buffer", caps.command_buffer},
            {"command_buffer_mutable_dispatch", caps.command_buffer_mutable_dispatch},
            {"recordable_queues", caps.recordable_queues},
            {"recordable_queue_max_size", caps.recordable_queue_max_size},
            {"onchip_global_memory_size", caps.onchip_global_memory ? caps.onchip_global_memory_size : 0},
            {"priority_hints", priorityHints(caps)},
            {"perf_hint", caps.qcom_perf_hint},
            {"dma_buf_import", dmaBufImportPaths(caps)},
            {"subgroups", caps.subgroups},
            {"max_compute_units", caps.max_compute_units},
            {"max_work_group_size", caps.max_work_group_size},
            {"global_mem_size", caps.global_mem_size},
            {"max_alloc_size", caps.max_alloc_size},
            {"global_cache_size", caps.global_cache_size},
            {"global_cache_line_size", caps.global_cache_line_size},
            {"local_mem_size", caps.local_mem_size},
            {"recording", recordingPath(caps)},
            {"timing", clockName(report.clock.clock)},
            {"timing_reason", report.clock.reason},
            {"hints", report.hints.description},
            {"extensions", caps.extensions},
        });
    }
    return {{"devices", devices}};
}

} // namespace framecl::gpu
