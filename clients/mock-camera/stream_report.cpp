#include "stream_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace framecl::mock_camera {
namespace {

struct Latency {
    double p50, p99, max;
};

// Nearest rank: the smallest value with at least `fraction` of the values at or below it.
template <typename T> T percentile(const std::vector<T>& sorted, double fraction)
{
    const auto rank = size_t(std::ceil(fraction * double(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::optional<Latency> latency(const StreamReport& report)
{
    if (report.latency_ms.empty())
        return std::nullopt;
    std::vector<double> sorted = report.latency_ms;
    std::sort(sorted.begin(), sorted.end());
    return Latency{percentile(sorted, 0.50), percentile(sorted, 0.99), sorted.back()};
}

double medianGpuMs(const StageTimes& stage)
{
    std::vector<uint64_t> sorted = stage.gpu_ns;
    std::sort(sorted.begin(), sorted.end());
    return double(percentile(sorted, 0.50)) / 1e6;
}

double achievedFps(const StreamReport& report)
{
    return report.seconds > 0 ? double(report.ok) / report.seconds : 0.0;
}

// As --buffers names it: the mock camera asks DRM for vgem's node only.
const char* bufferSourceName(framecl_buffer_source source)
{
    return source == FRAMECL_BUFFERS_DRM ? "vgem" : framecl_buffer_source_name(source);
}

const char* backpressureName(framecl_backpressure backpressure)
{
    switch (backpressure) {
    case FRAMECL_BACKPRESSURE_REJECT:
        return "reject";
    case FRAMECL_BACKPRESSURE_DROP_OLDEST:
        return "drop_oldest";
    case FRAMECL_BACKPRESSURE_BLOCK:
        break;
    }
    return "block";
}

double deadlineMs(const StreamSettings& settings)
{
    return double(settings.session_options.deadline_us) / 1000.0;
}

} // namespace

bool streamSucceeded(const StreamReport& report, const StreamSettings& settings)
{
    const framecl_session_options& options = settings.session_options;
    const bool busy_allowed = options.backpressure != FRAMECL_BACKPRESSURE_BLOCK;
    const bool dropped_allowed = options.backpressure == FRAMECL_BACKPRESSURE_DROP_OLDEST || options.deadline_us > 0;
    const uint64_t let_go = (busy_allowed ? report.busy : 0) + (dropped_allowed ? report.dropped : 0);
    return report.failed == 0 && report.lost == 0 && (!settings.verify || report.mismatches == 0) &&
           report.ok + let_go == (report.stopped_early ? report.frames : settings.frames);
}

nlohmann::json reportJson(const StreamReport& report, const StreamSettings& settings)
{
    nlohmann::json json{
        {"frames", report.frames},   {"ok", report.ok},           {"failed", report.failed},
        {"lost", report.lost},       {"busy", report.busy},       {"dropped", report.dropped},
        {"out_of_order", report.out_of_order}, {"stopped_early", report.stopped_early},
        {"fps", achievedFps(report)},
        {"first_submit_s", report.first_submit_s}, {"last_done_s", report.last_done_s},
    };
    if (const auto l = latency(report))
        json["latency_ms"] = {{"p50", l->p50}, {"p99", l->p99}, {"max", l->max}};
    else
        json["latency_ms"] = nullptr;
    json["stages"] = nlohmann::json::array();
    for (const StageTimes& stage : report.stages)
        json["stages"].push_back({{"name", stage.name}, {"gpu_ms_median", medianGpuMs(stage)}});
    json["backpressure"] = backpressureName(settings.session_options.backpressure);
    json["deadline_ms"] = deadlineMs(settings);
    json["buffers"] = bufferSourceName(report.buffers);
    if (settings.verify)
        json["mismatches"] = report.mismatches;
    return json;
}

void printReportText(const StreamReport& report, const StreamSettings& settings)
{
    const framecl_frame_layout& in = settings.input;
    fmt::print("{} frames of {} {}x{} through '{}', {}, pool of {}, {} buffers\n", settings.frames,
               framecl_format_name(in.fourcc), in.width, in.height, settings.pipeline,
               settings.fps > 0 ? fmt::format("{} fps", settings.fps) : std::string("as fast as the pool allows"),
               settings.pool, bufferSourceName(report.buffers));
    fmt::print("  backpressure {}, {}\n", backpressureName(settings.session_options.backpressure),
               settings.session_options.deadline_us ? fmt::format("deadline {:g} ms", deadlineMs(settings))
                                                    : std::string("no deadline"));
    fmt::print("  frames sent     {}{}\n", report.frames, report.stopped_early ? " (stopped by a signal)" : "");
    fmt::print("  done ok         {}\n", report.ok);
    fmt::print("  failed          {}\n", report.failed);
    fmt::print("  lost            {}\n", report.lost);
    fmt::print("  busy            {}\n", report.busy);
    fmt::print("  dropped         {}\n", report.dropped);
    fmt::print("  out of order    {}\n", report.out_of_order);
    if (settings.verify)
        fmt::print("  mismatches      {}\n", report.mismatches);
    fmt::print("  achieved fps    {:.2f}\n", achievedFps(report));
    if (const auto l = latency(report))
        fmt::print("  latency ms      p50 {:.3f}  p99 {:.3f}  max {:.3f}\n", l->p50, l->p99, l->max);
    else
        fmt::print("  latency ms      - (no frame came back ok)\n");
    if (report.stages.empty())
        return;
    fmt::print("  GPU ms per stage (median)\n");
    for (const StageTimes& stage : report.stages)
        fmt::print("    {:<30} {:.3f}\n", stage.name, medianGpuMs(stage));
}

} // namespace framecl::mock_camera
