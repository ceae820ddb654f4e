// framecl-v4l2-capture: streams a V4L2 capture device's frames through a framecld
// pipeline without copying a pixel, as a camera process would (docs/protocol.md), and
// reports what came back. The example to start a camera client from: it uses the public
// API only (<framecl/client.hpp>), and capture_stream.cpp is the part to copy.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture_stream.hpp"
#include "client-tools/frame_options.hpp"
#include "client-tools/frame_statistics.hpp"

namespace {

using framecl::v4l2_capture::StreamReport;
using framecl::v4l2_capture::StreamSettings;

// Nearest rank: the smallest value with at least `fraction` of the values at or below it.
double percentile(std::vector<double> values, double fraction)
{
    std::sort(values.begin(), values.end());
    const auto rank = size_t(std::ceil(fraction * double(values.size())));
    return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

nlohmann::json latencyJson(const std::vector<double>& latency_ms)
{
    if (latency_ms.empty())
        return nullptr;
    return {{"p50", percentile(latency_ms, 0.50)},
            {"p99", percentile(latency_ms, 0.99)},
            {"max", percentile(latency_ms, 1.0)}};
}

bool succeeded(const StreamReport& report, const StreamSettings& settings)
{
    return report.error.empty() && report.ok == settings.frames && report.mismatches == 0;
}

// The last frame's statistics, whole (framecl/statistics.h's arrays, flattened row by
// row), and their summary; null where no frame brought any.
nlohmann::json statisticsJson(const StreamReport& report)
{
    if (!report.last_statistics)
        return nullptr;
    const framecl_statistics& s = *report.last_statistics;
    const auto words = [](const auto& array) {
        const auto* first = reinterpret_cast<const uint32_t*>(&array);
        return std::vector<uint32_t>(first, first + sizeof array / sizeof(uint32_t));
    };
    const framecl::cli::StatisticsSummary summary = framecl::cli::summarize(s);
    return {{"frames", report.with_statistics},
            {"zones", {FRAMECL_STATISTICS_ZONES_X, FRAMECL_STATISTICS_ZONES_Y}},
            {"sums", words(s.sums)},
            {"counts", words(s.counts)},
            {"histogram", words(s.histogram)},
            {"mean_rgb", {summary.mean[0], summary.mean[1], summary.mean[2]}},
            {"counted", summary.counted},
            {"luma_median_bin", summary.median_bin}};
}

nlohmann::json reportJson(const StreamReport& report, const StreamSettings& settings)
{
    const double seconds = report.last_done_s - report.first_submit_s;
    return {{"device", settings.device},
            {"card", report.card},
            {"io", settings.io == framecl::v4l2_capture::Io::Mmap ? "mmap" : "dmabuf"},
            {"pipeline", settings.pipeline},
            {"format", framecl_format_name(report.input.fourcc)},
            {"size", fmt::format("{}x{}", report.input.width, report.input.height)},
            {"stride", report.input.planes[0].stride},
            {"output_format", framecl_format_name(report.output.fourcc)},
            {"output_buffers", framecl_buffer_source_name(report.output_buffers)},
            {"frames", report.frames},
            {"ok", report.ok},
            {"failed", report.failed},
            {"dropped", report.dropped},
            {"busy", report.busy},
            {"lost", report.lost},
            {"corrupted", report.corrupted},
            {"skipped_by_driver", report.skipped},
            {"mismatches", report.mismatches},
            {"verified", settings.verify},
            {"fps", seconds > 0 ? double(report.ok) / seconds : 0.0},
            {"first_submit_s", report.first_submit_s},
            {"last_done_s", report.last_done_s},
            {"latency_ms", latencyJson(report.latency_ms)},
            {"capture_to_done_ms", latencyJson(report.capture_latency_ms)},
            {"statistics", statisticsJson(report)},
            {"error", report.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.error)}};
}

void printReport(const StreamReport& report, const StreamSettings& settings)
{
    const nlohmann::json json = reportJson(report, settings);
    fmt::print("{} frames of {} {} from {} ({}, {}) through '{}'\n", report.frames, json["format"].get<std::string>(),
               json["size"].get<std::string>(), settings.device, report.card, json["io"].get<std::string>(),
               settings.pipeline);
    fmt::print("  ok {}, failed {}, dropped {}, busy {}, lost {}; corrupted by the driver {}, skipped by it {}\n",
               report.ok, report.failed, report.dropped, report.busy, report.lost, report.corrupted, report.skipped);
    if (settings.verify)
        fmt::print("  outputs unlike their captures: {}\n", report.mismatches);
    fmt::print("  {:.1f} fps\n", json["fps"].get<double>());
    for (const char* key : {"latency_ms", "capture_to_done_ms"})
        if (!json[key].is_null())
            fmt::print("  {}: p50 {:.3f}, p99 {:.3f}, max {:.3f}\n", key, json[key]["p50"].get<double>(),
                       json[key]["p99"].get<double>(), json[key]["max"].get<double>());
    if (report.last_statistics)
        fmt::print("  statistics of the last frame: {}\n", framecl::cli::statisticsText(*report.last_statistics));
    if (!report.error.empty())
        fmt::print("  stopped: {}\n", report.error);
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecl-v4l2-capture: stream a V4L2 capture device's frames through framecld and report on them"};
    StreamSettings settings;
    std::string format = "nv12", size = "640x480", io = "mmap", output = "none", buffers = "auto", socket;
    bool json = false;
    app.add_option("--device,-d", settings.device, "The V4L2 capture device, e.g. /dev/video0")->required();
    app.add_option("--pipeline,-p", settings.pipeline, "Pipeline name (`copy` always exists)")->required();
    app.add_option("--frames", settings.frames, "Frames to send")->required()->check(CLI::PositiveNumber);
    app.add_option("--format", format,
                   "Pixel format to capture: nv12, r8 (V4L2 GREY), abgr8888 (V4L2 RGBA32), or a Bayer format by its "
                   "V4L2 name (srggb8 ... sgbrg12p)")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](const std::string& name) {
                const uint32_t fourcc = framecl_format_from_name(name.c_str());
                return fourcc && fourcc != DRM_FORMAT_R16 && fourcc != DRM_FORMAT_ABGR16161616
                           ? std::string()
                           : "not a format to capture: nv12, r8, abgr8888, or a Bayer format (srggb8 ... sgbrg12p)";
            },
            "FORMAT"));
    app.add_option("--size", size, "Frame size to ask the device for, WIDTHxHEIGHT; it may choose another")
        ->capture_default_str();
    app.add_option("--io", io,
                   "mmap: the device's buffers, exported as dma-bufs (VIDIOC_EXPBUF); dmabuf: buffers from "
                   "framecl_allocate_buffer (--buffers) that the device fills")
        ->capture_default_str()
        ->check(CLI::IsMember({"mmap", "dmabuf"}, CLI::ignore_case));
    app.add_option("--count", settings.buffers, "Capture buffers, and as many outputs: frames in flight at most")
        ->capture_default_str()
        ->check(CLI::Range(2u, 32u));
    const std::map<std::string, framecl_buffer_source> sources{{"auto", FRAMECL_BUFFERS_AUTO},
                                                              {"dma-heap", FRAMECL_BUFFERS_DMA_HEAP},
                                                              {"vgem", FRAMECL_BUFFERS_DRM},
                                                              {"memfd", FRAMECL_BUFFERS_MEMFD}};
    app.add_option("--buffers", buffers,
                   "Where output buffers (and --io dmabuf's capture buffers, which must be dma-bufs) come from: "
                   "auto, dma-heap, vgem or memfd")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "dma-heap", "vgem", "memfd"}, CLI::ignore_case));
    app.add_flag("--verify", settings.verify,
                 "With the copy pipeline: check each output equals its capture, read through the dma-buf");
    app.add_option("--output", output,
                   "none, png (R8 and ABGR8888 outputs; raw for the others) or raw: each output as "
                   "frame-000123.png or .raw in --output-dir")
        ->capture_default_str()
        ->check(CLI::IsMember({"none", "png", "raw"}, CLI::ignore_case));
    app.add_option("--output-dir", settings.output_dir, "Where --output and --save-captures write")
        ->capture_default_str();
    app.add_flag("--save-captures", settings.save_captures,
                 "Write each capture too, as framecld read it: capture-000123.raw (planes packed) in --output-dir");
    app.add_option("--socket", socket,
                   "framecld's socket (default: $FRAMECL_SOCKET, else " FRAMECL_DEFAULT_SOCKET ")");
    app.add_option("--timeout", settings.timeout_ms,
                   "Milliseconds to wait for framecld (to connect, per request, for a Done) and for a frame from "
                   "the device")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_flag("--json", json, "Print the report as one JSON object");
    CLI11_PARSE(app, argc, argv);
    for (std::string* word : {&io, &buffers, &output})
        std::transform(word->begin(), word->end(), word->begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });

    if (settings.verify && settings.pipeline != "copy") {
        fmt::print(stderr, "framecl-v4l2-capture: --verify is only available for the copy pipeline, whose output "
                           "equals its input\n");
        return 2;
    }
    auto frame = framecl::cli::packedFrame(format, size);
    if (!frame) {
        fmt::print(stderr, "framecl-v4l2-capture: {}\n", frame.error().message);
        return 2;
    }
    settings.fourcc = frame->layout.fourcc;
    settings.width = frame->layout.width;
    settings.height = frame->layout.height;
    settings.io = io == "dmabuf" ? framecl::v4l2_capture::Io::DmaBuf : framecl::v4l2_capture::Io::Mmap;
    settings.allocate.source = sources.at(buffers);
    if (settings.io == framecl::v4l2_capture::Io::DmaBuf && settings.allocate.source == FRAMECL_BUFFERS_MEMFD) {
        fmt::print(stderr, "framecl-v4l2-capture: --io dmabuf needs dma-bufs: --buffers memfd gives memfds\n");
        return 2;
    }
    settings.output_files = output == "png"   ? framecl::v4l2_capture::OutputFiles::Png
                            : output == "raw" ? framecl::v4l2_capture::OutputFiles::Raw
                                              : framecl::v4l2_capture::OutputFiles::None;
    if (settings.output_files != framecl::v4l2_capture::OutputFiles::None || settings.save_captures) {
        std::error_code ec;
        std::filesystem::create_directories(settings.output_dir.empty() ? "." : settings.output_dir, ec);
        if (ec) {
            fmt::print(stderr, "framecl-v4l2-capture: {}: {}\n", settings.output_dir.string(), ec.message());
            return 1;
        }
    }

    try {
        auto client = framecl::Client::connect(
            {.socket_path = socket, .client_name = "framecl-v4l2-capture", .timeout_ms = settings.timeout_ms});
        auto report = framecl::v4l2_capture::streamCapture(client, settings);
        if (!report) {
            fmt::print(stderr, "framecl-v4l2-capture: {}\n", report.error().message);
            return 1;
        }
        if (json)
            fmt::print("{}\n", reportJson(*report, settings).dump());
        else
            printReport(*report, settings);
        return succeeded(*report, settings) ? 0 : 1;
    } catch (const framecl::ClientError& error) {
        fmt::print(stderr, "framecl-v4l2-capture: framecld: {}\n", error.what());
        return 1;
    }
}
