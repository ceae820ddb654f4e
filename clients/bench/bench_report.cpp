#include "bench_report.hpp"

#include <cmath>

#include <fmt/format.h>

namespace framecl::bench {

std::string markdown(const Report& report)
{
    std::string text = fmt::format("Device: {}. Copy bandwidth (clEnqueueCopyBuffer of {} MB, bytes read and "
                                   "written): {:.1f} GB/s. Median of {} runs after warm-up, GPU time from "
                                   "{}.\n\nCommand: `{}`\n",
                                   report.device, report.copy_bytes / 1000000, report.copy_gbs, report.runs,
                                   report.timing, report.command);
    std::string filter;
    for (const Measurement& m : report.measurements) {
        if (m.filter != filter) {
            filter = m.filter;
            text += fmt::format("\n### {}\n\n| input | variant | median ms | min ms | GB/s | of copy | vs baseline |\n"
                                "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
                                filter);
        }
        if (!m.error.empty()) {
            text += fmt::format("| {} | {} | – | – | – | – | {}{} |\n", m.input, m.variant,
                                m.failed_check ? "" : "did not run: ", m.error);
            continue;
        }
        const double gbs = m.gigabytesPerSecond();
        const std::string variant =
            m.image_copy_median_ns > 0
                ? fmt::format("{} (input copied into an image: {:.3f} ms of it)", m.variant,
                              double(m.image_copy_median_ns) / 1e6)
                : m.variant;
        text += fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.1f} | {:.0f}% | {} |\n", m.input, variant,
                            double(m.median_ns) / 1e6, double(m.min_ns) / 1e6, gbs,
                            report.copy_gbs > 0 ? 100 * gbs / report.copy_gbs : 0,
                            m.speedup > 0 ? fmt::format("{:.2f}x", m.speedup) : "–");
    }
    for (const Measurement& m : report.measurements) {
        if (m.stages.empty() || !m.error.empty())
            continue;
        text += fmt::format("\n### {}: its stages ({}, {})\n\nThe whole frame's dispatches: {:.3f} ms; from the "
                            "first one's start to the last one's end: {:.3f} ms. The copy skeleton (one copy per "
                            "stage of that stage's bytes): {:.3f} ms, {:.3f} ms from start to end.\n\n",
                            m.filter, m.input, m.variant, double(m.median_ns) / 1e6, double(m.span_median_ns) / 1e6,
                            double(m.skeleton_median_ns) / 1e6, double(m.skeleton_span_median_ns) / 1e6);
        if (m.unfused_median_ns > 0 && m.median_ns > 0)
            text += fmt::format("Fused: {:.2f}x faster than unfused ({:.3f} ms), and {:.2f}x the unfused frame's "
                                "slowest stage ({:.3f} ms).\n\n",
                                double(m.unfused_median_ns) / double(m.median_ns), double(m.unfused_median_ns) / 1e6,
                                double(m.median_ns) / double(m.slowest_stage_ns), double(m.slowest_stage_ns) / 1e6);
        text += "| stage | median ms | MB read and written | GB/s | of copy |\n| --- | ---: | ---: | ---: | ---: |\n";
        for (const StageMeasurement& stage : m.stages) {
            const double gbs = stage.median_ns ? double(stage.bytes) / double(stage.median_ns) : 0;
            text += fmt::format("| {} | {:.3f} | {:.1f} | {:.1f} | {:.0f}% |\n", stage.name,
                                double(stage.median_ns) / 1e6, double(stage.bytes) / 1e6, gbs,
                                report.copy_gbs > 0 ? 100 * gbs / report.copy_gbs : 0);
        }
    }
    // The pipelines' speedups from fusion, over every pipeline case and size of the run.
    double log_sum = 0;
    size_t fused_runs = 0;
    for (const Measurement& m : report.measurements)
        if (m.error.empty() && m.unfused_median_ns > 0 && m.median_ns > 0) {
            log_sum += std::log(double(m.unfused_median_ns) / double(m.median_ns));
            ++fused_runs;
        }
    if (fused_runs > 0)
        text += fmt::format("\nFused over unfused, geometric mean over the {} pipeline measurements above: "
                            "{:.2f}x.\n",
                            fused_runs, std::exp(log_sum / double(fused_runs)));
    return text;
}

nlohmann::json json(const Report& report)
{
    nlohmann::json measurements = nlohmann::json::array();
    for (const Measurement& m : report.measurements) {
        nlohmann::json entry = {{"filter", m.filter}, {"input", m.input}, {"variant", m.variant}};
        if (!m.error.empty()) {
            entry["error"] = m.error;
            if (m.failed_check)
                entry["failed_check"] = true;
        } else {
            entry.update({{"median_ns", m.median_ns},
                          {"min_ns", m.min_ns},
                          {"max_ns", m.max_ns},
                          {"frame_bytes", m.frame_bytes},
                          {"gbs", m.gigabytesPerSecond()},
                          {"copy_fraction", report.copy_gbs > 0 ? m.gigabytesPerSecond() / report.copy_gbs : 0}});
            if (m.speedup > 0)
                entry["speedup"] = m.speedup;
            if (m.wall_median_ns > 0)
                entry["wall_median_ns"] = m.wall_median_ns;
            if (m.image_copy_median_ns > 0)
                entry["image_copy_median_ns"] = m.image_copy_median_ns;
            if (!m.output_file.empty())
                entry.update({{"input_file", m.input_file}, {"output_file", m.output_file}, {"output", m.output}});
            if (!m.previous_file.empty())
                entry["previous_file"] = m.previous_file;
            if (!m.statistics_file.empty())
                entry["statistics_file"] = m.statistics_file;
            if (!m.stages.empty()) {
                nlohmann::json stages = nlohmann::json::array();
                for (const StageMeasurement& stage : m.stages)
                    stages.push_back({{"name", stage.name}, {"median_ns", stage.median_ns}, {"bytes", stage.bytes}});
                entry.update({{"stages", stages},
                              {"span_median_ns", m.span_median_ns},
                              {"skeleton_median_ns", m.skeleton_median_ns},
                              {"skeleton_span_median_ns", m.skeleton_span_median_ns}});
                if (m.unfused_median_ns > 0)
                    entry.update({{"unfused_median_ns", m.unfused_median_ns},
                                  {"slowest_stage_ns", m.slowest_stage_ns}});
            }
        }
        measurements.push_back(entry);
    }
    return {{"device", report.device},   {"command", report.command},       {"runs", report.runs},
            {"timing", report.timing},
            {"copy_gbs", report.copy_gbs}, {"copy_bytes", report.copy_bytes}, {"measurements", measurements}};
}

} // namespace framecl::bench
