// framecl-mock-camera: streams synthetic frames through framecld as a camera process
// would, and reports what came back.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "client-tools/daemon_client.hpp"
#include "client-tools/frame_options.hpp"
#include "frame_stream.hpp"
#include "stream_report.hpp"

namespace {

// deadline_us is a uint32_t on the wire.
constexpr double max_deadline_ms = 4294967.295;

framecl_session_options sessionOptions(std::string backpressure, double deadline_ms)
{
    std::transform(backpressure.begin(), backpressure.end(), backpressure.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    framecl_session_options options{FRAMECL_BACKPRESSURE_BLOCK, 0};
    if (backpressure == "reject")
        options.backpressure = FRAMECL_BACKPRESSURE_REJECT;
    else if (backpressure == "drop_oldest")
        options.backpressure = FRAMECL_BACKPRESSURE_DROP_OLDEST;
    // Rounded up, so that a deadline under a microsecond is not taken for none.
    options.deadline_us = uint32_t(std::min(std::ceil(deadline_ms * 1000.0), double(UINT32_MAX)));
    return options;
}

// Set by SIGINT and SIGTERM: the stream ends early and still reports (std::atomic<bool>
// is lock-free, so a handler may store to it).
std::atomic<bool> stop_requested{false};

void requestStop(int) { stop_requested = true; }

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecl-mock-camera: stream synthetic frames through framecld and report fps, latency and losses"};
    framecl::mock_camera::StreamSettings settings{};
    settings.pool = 4;
    settings.seed = 1;
    settings.timeout_ms = 5000;
    std::string format, size, dump_dir;
    framecl::cli::DaemonOptions daemon{"", 5000, "framecl-mock-camera"};
    bool json = false;
    app.add_option("--pipeline,-p", settings.pipeline, "Pipeline name (`copy` always exists)")->required();
    app.add_option("--format", format, "Pixel format of the frames")
        ->required()
        ->check(CLI::IsMember({"nv12", "abgr8888", "r8"}, CLI::ignore_case));
    app.add_option("--size", size, "Frame size, WIDTHxHEIGHT")->required();
    app.add_option("--fps", settings.fps, "Frames per second; 0: as fast as the pool allows")
        ->required()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--frames", settings.frames, "Frames to send")->required()->check(CLI::PositiveNumber);
    app.add_option("--pool", settings.pool, "Output buffers (and one input more): at most this many frames in flight")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--socket", daemon.socket,
                   "framecld's socket (default: $FRAMECL_SOCKET, else " FRAMECL_DEFAULT_SOCKET ")");
    app.add_option("--timeout", settings.timeout_ms,
                   "Milliseconds to wait for framecld: to connect, per request, for a frame's Done")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--name", daemon.client_name, "Client name, as [[client_class]] match_name sees it")
        ->capture_default_str();
    app.add_option("--dump", dump_dir,
                   "Write every output frame here, as frame-000123.png (or .raw); encoding on the stream's thread "
                   "slows it and adds to the latency");
    app.add_option("--seed", settings.seed, "Seed of the frames' noise")->capture_default_str();
    std::vector<int> motion;
    app.add_option("--motion", motion,
                   "DX,DY: instead of bars and a square, a texture without noise sliding DX, DY pixels a frame "
                   "(what blockmatch should find), seeded by --seed")
        ->expected(2)
        ->delimiter(',')
        ->check(CLI::Range(-1024, 1024));
    std::string backpressure = "block";
    app.add_option("--backpressure", backpressure,
                   "When framecld already holds limits.max_inflight_per_client frames of this camera: block (the "
                   "submit waits in the daemon), reject (busy at once) or drop_oldest (the oldest frame not yet "
                   "started is dropped)")
        ->capture_default_str()
        ->check(CLI::IsMember({"block", "reject", "drop_oldest"}, CLI::ignore_case));
    double deadline_ms = 0;
    app.add_option("--deadline-ms", deadline_ms,
                   "A frame not started this many milliseconds after framecld got it is dropped; 0: no deadline")
        ->capture_default_str()
        ->check(CLI::Range(0.0, max_deadline_ms));
    settings.buffers = {FRAMECL_BUFFERS_AUTO, nullptr}; // vgem: libframecl's default DRM node is vgem's
    const std::map<std::string, framecl_buffer_source> buffer_sources{{"auto", FRAMECL_BUFFERS_AUTO},
                                                                     {"dma-heap", FRAMECL_BUFFERS_DMA_HEAP},
                                                                     {"vgem", FRAMECL_BUFFERS_DRM},
                                                                     {"memfd", FRAMECL_BUFFERS_MEMFD}};
    app.add_option("--buffers", settings.buffers.source,
                   "Where the frame buffers come from: auto (the DMA-BUF heap /dev/dma_heap/system where there is "
                   "one, else memfd; the default), dma-heap, vgem (dumb buffers of the vgem DRM driver) or memfd; "
                   "the report says which was used")
        ->transform(CLI::CheckedTransformer(buffer_sources, CLI::ignore_case));
    app.add_flag("--verify", settings.verify, "With the copy pipeline: check each output equals its input");
    app.add_flag("--json", json, "Print the summary as one JSON object");
    CLI11_PARSE(app, argc, argv);

    if (settings.verify && settings.pipeline != "copy") {
        fmt::print(stderr, "framecl-mock-camera: --verify is only available for the copy pipeline, whose output "
                           "equals its input\n");
        return 2;
    }
    auto frame = framecl::cli::packedFrame(format, size);
    if (!frame) {
        fmt::print(stderr, "framecl-mock-camera: {}\n", frame.error().message);
        return 2;
    }
    settings.input = frame->layout;
    if (!motion.empty())
        settings.motion = framecl::mock_camera::Motion{motion[0], motion[1]};
    settings.session_options = sessionOptions(backpressure, deadline_ms);
    daemon.timeout_ms = settings.timeout_ms;
    if (!dump_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(dump_dir, ec);
        if (ec) {
            fmt::print(stderr, "framecl-mock-camera: {}: {}\n", dump_dir, ec.message());
            return 1;
        }
        settings.dump_dir = dump_dir;
    }

    auto client = framecl::cli::connectToDaemon(daemon);
    if (!client) {
        fmt::print(stderr, "framecl-mock-camera: {}\n", client.error().message);
        return 1;
    }
    struct sigaction stop{};
    stop.sa_handler = requestStop;
    sigaction(SIGINT, &stop, nullptr);
    sigaction(SIGTERM, &stop, nullptr);
    settings.stop_requested = &stop_requested;
    auto report = framecl::mock_camera::streamFrames(client->get(), settings);
    if (!report) {
        fmt::print(stderr, "framecl-mock-camera: {}\n", report.error().message);
        return 1;
    }
    if (json)
        fmt::print("{}\n", framecl::mock_camera::reportJson(*report, settings).dump());
    else
        framecl::mock_camera::printReportText(*report, settings);
    return framecl::mock_camera::streamSucceeded(*report, settings) ? 0 : 1;
}
