#include "budget_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "pipeline/calibration.hpp"
#include "pipeline/stage_timing.hpp"

namespace framecl::bench {
namespace {

uint64_t nowNs()
{
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

BudgetRow runBudget(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> definition,
                    const pipeline::FrameShape& input, double budget_ms, int warmup, int frames)
{
    BudgetRow row;
    row.budget_ms = budget_ms;
    pipeline::SessionOptions options;
    options.recording = gpu::RecordingMode::Off; // an event per tile: each dispatch measured
    options.kernel_budget_ns = uint64_t(budget_ms * 1e6);
    auto session = pipeline::Session::open(gpu, definition, input, options);
    if (!session) {
        row.error = session.error().message;
        return row;
    }
    framecl_frame_layout in_layout{}, out_layout{};
    const uint64_t in_bytes = framecl_packed_layout(input.fourcc, input.width, input.height, &in_layout);
    const pipeline::FrameShape output = (*session)->output();
    const uint64_t out_bytes = framecl_packed_layout(output.fourcc, output.width, output.height, &out_layout);
    std::vector<uint8_t> content = pipeline::cameraLikeFrame(in_bytes); // what calibration sees too
    cl_int err = CL_SUCCESS;
    cl::Buffer in(gpu.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_bytes, content.data(), &err);
    cl::Buffer out(gpu.context(), CL_MEM_WRITE_ONLY, out_bytes, nullptr, &err);
    if (err != CL_SUCCESS) {
        row.error = gpu::clFailure("clCreateBuffer", err, "the benchmark's frames");
        return row;
    }

    std::vector<uint64_t> dispatch_ns, frame_ns;
    uint64_t measured_ns = 0;
    for (int i = 0; i < warmup + frames; ++i) {
        const uint64_t start = nowNs();
        auto frame = (*session)->enqueue({in(), &in_layout}, {out(), &out_layout});
        if (!frame) {
            row.error = frame.error().message;
            return row;
        }
        gpu.queue().flush();
        if ((err = frame->events.back().wait()) != CL_SUCCESS) {
            row.error = gpu::clFailure("clWaitForEvents", err, "a frame");
            return row;
        }
        const uint64_t wall = nowNs() - start;
        (*session)->frameCompleted(*frame, wall);
        if (i < warmup)
            continue;
        frame_ns.push_back(wall);
        measured_ns += wall;
        for (const auto& slice : (*session)->dispatchSlices(*frame))
            dispatch_ns.push_back(slice.end_ns - slice.start_ns);
    }
    for (const auto& stage : (*session)->budgetStats())
        row.tiles += stage.tiles;
    std::sort(dispatch_ns.begin(), dispatch_ns.end());
    row.dispatches = dispatch_ns.size();
    if (!dispatch_ns.empty()) {
        row.longest_ms = double(dispatch_ns.back()) / 1e6;
        const size_t rank = size_t(std::ceil(0.99 * double(dispatch_ns.size())));
        row.p99_ms = double(dispatch_ns[std::max<size_t>(rank, 1) - 1]) / 1e6;
        if (budget_ms > 0)
            row.overruns = uint64_t(std::count_if(dispatch_ns.begin(), dispatch_ns.end(),
                                                  [&](uint64_t ns) { return double(ns) > budget_ms * 1e6; }));
    }
    row.frame_ms = double(pipeline::median(frame_ns)) / 1e6;
    row.fps = measured_ns ? double(frames) * 1e9 / double(measured_ns) : 0;
    return row;
}

} // namespace

BudgetReport benchBudgets(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> definition,
                          const pipeline::FrameShape& input, const std::vector<double>& budgets_ms, int warmup,
                          int frames)
{
    BudgetReport report;
    report.pipeline = definition->stages.empty() ? "" : definition->stages[0].label;
    report.input = pipeline::describe(input);
    report.frames = frames;
    report.rows.push_back(runBudget(gpu, definition, input, 0, warmup, frames));
    for (double budget : budgets_ms)
        report.rows.push_back(runBudget(gpu, definition, input, budget, warmup, frames));
    return report;
}

std::string budgetMarkdown(const BudgetReport& report)
{
    std::string text = fmt::format("Device: {}\n\nCommand: `{}`\n\n{} on {}, {} frames after the warm-up, each "
                                   "frame waited for (as framecld runs them), recording off.\n\n",
                                   report.device, report.command, report.pipeline, report.input, report.frames);
    text += "| budget | tiles | longest dispatch | p99 dispatch | over budget | frame (median) | throughput | vs "
            "untiled |\n|---|---|---|---|---|---|---|---|\n";
    const double untiled_fps = report.rows.empty() ? 0 : report.rows[0].fps;
    for (const BudgetRow& row : report.rows) {
        const std::string budget = row.budget_ms > 0 ? fmt::format("{:g} ms", row.budget_ms) : "untiled";
        if (!row.error.empty()) {
            text += fmt::format("| {} | {} | | | | | | |\n", budget, row.error);
            continue;
        }
        const std::string ratio =
            row.budget_ms > 0 ? fmt::format("{:.1f} budget", row.longest_ms / row.budget_ms) : "";
        text += fmt::format("| {} | {} | {:.3f} ms{} | {:.3f} ms | {} of {} | {:.2f} ms | {:.2f} fps | {:.0f}% |\n",
                            budget, row.tiles, row.longest_ms, ratio.empty() ? "" : " (" + ratio + ")", row.p99_ms,
                            row.overruns, row.dispatches, row.frame_ms, row.fps,
                            untiled_fps > 0 ? 100.0 * row.fps / untiled_fps : 0.0);
    }
    return text;
}

nlohmann::json budgetJson(const BudgetReport& report)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const BudgetRow& row : report.rows)
        rows.push_back({{"budget_ms", row.budget_ms},
                        {"tiles", row.tiles},
                        {"longest_dispatch_ms", row.longest_ms},
                        {"p99_dispatch_ms", row.p99_ms},
                        {"dispatches_over_budget", row.overruns},
                        {"dispatches", row.dispatches},
                        {"frame_ms_median", row.frame_ms},
                        {"fps", row.fps},
                        {"error", row.error}});
    return {{"device", report.device}, {"command", report.command}, {"pipeline", report.pipeline},
            {"input", report.input},   {"frames", report.frames},   {"rows", rows}};
}

} // namespace framecl::bench
