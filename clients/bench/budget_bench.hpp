#pragma once
// framecl-bench --budgets: one pipeline run frame after frame, untiled and under each
// kernel-time budget, as framecld runs a session's frames one at a time. Per budget:
// the tiles, the longest and 99th-percentile dispatch (profiling events of each tile,
// recording off so that every tile has one), the median frame time and the throughput
// against the untiled run.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/context.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/session.hpp"

namespace framecl::bench {

struct BudgetRow {
    double budget_ms = 0; // 0: untiled
    uint32_t tiles = 0;   // after the warm-up's re-plans
    double longest_ms = 0, p99_ms = 0;
    uint64_t overruns = 0; // measured dispatches over the budget
    uint64_t dispatches = 0;
    double frame_ms = 0; // median, enqueue to completion
    double fps = 0;      // measured frames over their total time
    std::string error;
};

struct BudgetReport {
    std::string device;
    std::string command;
    std::string pipeline; // the stage, as the catalog labels it
    std::string input;
    int frames = 0;
    std::vector<BudgetRow> rows; // untiled first
};

BudgetReport benchBudgets(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> definition,
                          const pipeline::FrameShape& input, const std::vector<double>& budgets_ms, int warmup,
                          int frames);

std::string budgetMarkdown(const BudgetReport& report);
nlohmann::json budgetJson(const BudgetReport& report);

} // namespace framecl::bench
