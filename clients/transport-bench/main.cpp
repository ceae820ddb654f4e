// framecl-transport-bench: what the daemon costs. For NV12 frames through the `copy`
// pipeline it times, per frame, a round trip through a running framecld (Submit to
// Done, one frame in flight) against the same Session run in this process on the same
// kind of buffers (sealed memfds imported zero-copy): the difference is the transport.
// Markdown on stdout; --json for machines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "daemon_client.hpp"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/client_frame.hpp"
#include "pipeline/session.hpp"
#include "framecl/client.h"

namespace {

using namespace framecl;
using Clock = std::chrono::steady_clock;

struct Percentiles {
    double median_us;
    double p99_us;
};

Percentiles summarize(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) { return samples[std::min(samples.size() - 1, size_t(q * double(samples.size())))]; };
    return {at(0.5), at(0.99)};
}

double microseconds(Clock::duration d)
{
    return std::chrono::duration<double, std::micro>(d).count();
}

// A sealed memfd of `size` bytes filled with noise, so no one can take a shortcut on zeros.
UniqueFd noiseMemfd(uint64_t size, uint32_t seed)
{
    const framecl_allocate_options memfd{FRAMECL_BUFFERS_MEMFD, nullptr};
    UniqueFd fd(framecl_allocate_buffer(&memfd, size, nullptr));
    if (!fd.valid())
        throw std::runtime_error(framecl_last_error(nullptr));
    std::vector<uint8_t> bytes(size);
    std::mt19937 random(seed);
    for (auto& byte : bytes)
        byte = uint8_t(random());
    if (pwrite(fd.get(), bytes.data(), size, 0) != ssize_t(size))
        throw std::runtime_error("pwrite failed");
    return fd;
}

std::vector<double> timeDaemon(framecl_client* client, uint32_t width, uint32_t height, int warmup, int frames)
{
    framecl_frame_layout layout{};
    const uint64_t size = framecl_packed_layout(DRM_FORMAT_NV12, width, height, &layout);
    UniqueFd in = noiseMemfd(size, 1), out = noiseMemfd(size, 2);
    uint32_t in_id = 0, out_id = 0, session = 0;
    if (framecl_register_buffer(client, in.get(), &layout, &in_id) || framecl_register_buffer(client, out.get(), &layout, &out_id) ||
        framecl_open_session(client, "copy", DRM_FORMAT_NV12, width, height, nullptr, 0, &session, nullptr))
        throw std::runtime_error(framecl_last_error(client));

    std::vector<double> samples;
    for (int i = 0; i < warmup + frames; ++i) {
        const auto start = Clock::now();
        framecl_done done{};
        if (framecl_submit(client, session, in_id, out_id, uint64_t(i)) || framecl_next_done(client, 10000, &done) ||
            done.status != FRAMECL_FRAME_OK)
            throw std::runtime_error(fmt::format("frame {} failed: {} {}", i, framecl_last_error(client), done.error));
        if (i >= warmup)
            samples.push_back(microseconds(Clock::now() - start));
    }
    framecl_close_session(client, session);
    framecl_release_buffer(client, in_id);
    framecl_release_buffer(client, out_id);
    return samples;
}

std::vector<double> timeInProcess(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> copy,
                                  gpu::RecordingMode recording, uint32_t width, uint32_t height, int warmup, int frames)
{
    framecl_frame_layout layout{};
    const uint64_t size = framecl_packed_layout(DRM_FORMAT_NV12, width, height, &layout);
    auto in = memory::importBuffer(gpu, noiseMemfd(size, 1), layout, uint64_t(width) * height);
    auto out = memory::importBuffer(gpu, noiseMemfd(size, 2), layout, uint64_t(width) * height);
    auto session = pipeline::Session::open(gpu, std::move(copy), {DRM_FORMAT_NV12, width, height}, {recording, true, {}, 0});
    if (!in || !out || !session)
        throw std::runtime_error("in-process setup failed");

    std::vector<double> samples;
    for (int i = 0; i < warmup + frames; ++i) {
        const auto start = Clock::now();
        // The daemon's own way, copies included where the device needs them (host-copy).
        auto frame = pipeline::enqueueClientFrame(**session, **in, **out, gpu.queue());
        if (!frame || frame->done.wait() != CL_SUCCESS)
            throw std::runtime_error("in-process frame failed");
        if (i >= warmup)
            samples.push_back(microseconds(Clock::now() - start));
    }
    return samples;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecl-transport-bench: a frame's round trip through framecld against the same pipeline in-process"};
    std::string socket;
    std::filesystem::path config_file = config::defaultConfigFile();
    int frames = 500, warmup = 50;
    bool json = false;
    std::vector<std::string> sizes{"640x480", "1920x1080"};
    app.add_option("--socket", socket, "framecld's socket (default: $FRAMECL_SOCKET, then the library default)");
    app.add_option("--config", config_file, "config whose gpu.device and kernel_dirs the in-process run uses")
        ->capture_default_str();
    app.add_option("--frames", frames, "timed frames per size")->capture_default_str();
    app.add_option("--warmup", warmup, "untimed frames first")->capture_default_str();
    app.add_option("--size", sizes, "WxH, repeatable")->capture_default_str();
    app.add_flag("--json", json, "JSON instead of a markdown table");
    CLI11_PARSE(app, argc, argv);
    log::setup(log::Sink::Stderr, spdlog::level::warn);

    auto config = config::loadConfigFile(config_file, config::defaultPaths());
    if (!config) {
        fmt::print(stderr, "{}\n", config.error().joined());
        return 1;
    }
    auto gpu = gpu::openGpu(config->gpu);
    if (!gpu) {
        fmt::print(stderr, "{}\n", gpu.error().message);
        return 1;
    }
    gpu::ProgramCache programs(config->daemon.cache_dir);
    const auto set = pipeline::loadPipelineSet(*config, gpu->get(), &programs);
    // The same replay the daemon would use, so only the transport differs.
    const gpu::RecordingMode recording = gpu::chooseRecordingMode((*gpu)->capabilities(), (*gpu)->vendor(), config->gpu.recording);
    auto client = cli::connectToDaemon({socket, 5000, "framecl-transport-bench"});
    if (!client) {
        fmt::print(stderr, "{}\n", client.error().message);
        return 1;
    }

    nlohmann::json results = nlohmann::json::array();
    for (const auto& text : sizes) {
        uint32_t width = 0, height = 0;
        if (std::sscanf(text.c_str(), "%ux%u", &width, &height) != 2) {
            fmt::print(stderr, "--size {}: expected WxH\n", text);
            return 1;
        }
        const auto daemon = summarize(timeDaemon(client->get(), width, height, warmup, frames));
        const auto local = summarize(timeInProcess(**gpu, set.catalog.find("copy"), recording, width, height, warmup, frames));
        results.push_back({{"size", text},
                           {"daemon_us", {{"median", daemon.median_us}, {"p99", daemon.p99_us}}},
                           {"in_process_us", {{"median", local.median_us}, {"p99", local.p99_us}}}});
    }

    if (json) {
        fmt::print("{}\n", nlohmann::json{{"device", (*gpu)->capabilities().name}, {"frames", frames}, {"results", results}}.dump(2));
        return 0;
    }
    fmt::print("NV12 through `copy` on {}, {} timed frames after {} warm-up, one frame in flight\n\n",
               (*gpu)->capabilities().name, frames, warmup);
    fmt::print("| size | daemon median µs | daemon p99 µs | in-process median µs | in-process p99 µs | daemon / in-process (median) |\n");
    fmt::print("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : results)
        fmt::print("| {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.2f}x |\n", r["size"].get<std::string>(),
                   r["daemon_us"]["median"].get<double>(), r["daemon_us"]["p99"].get<double>(),
                   r["in_process_us"]["median"].get<double>(), r["in_process_us"]["p99"].get<double>(),
                   r["daemon_us"]["median"].get<double>() / r["in_process_us"]["median"].get<double>());
    return 0;
}
