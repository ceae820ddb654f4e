// framecl-transport-bench: what the daemon costs. NV12 frames through the `copy`
// pipeline, through a running framecld and through the same Session in this process,
// on the same kind of buffers (sealed memfds, imported as the device allows):
//   - latency, one frame in flight: Submit to Done against enqueue to completion, and
//     where the daemon's time goes, hop by hop, from the Done's timestamps;
//   - throughput, four frames in flight;
//   - two frames chained through a buffer (the first's output the second's input),
//     the client waiting for the first Done before the second Submit, against both
//     submitted at once and ordered by the daemon (docs/protocol.md, "Fences").
// Every output is checked against its input, outside the timed spans: a frame that
// comes back wrong fails the run. Markdown on stdout; --json for machines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <random>
#include <thread>

#include <fcntl.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "client-tools/buffer_mapping.hpp"
#include "client-tools/daemon_client.hpp"
#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "framecl/client.h"
#include "gpu/context.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/client_frame.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/session.hpp"

namespace {

using namespace framecl;
using Clock = std::chrono::steady_clock; // CLOCK_MONOTONIC on Linux, the clock of a Done's times

constexpr size_t inputs = 2;      // frames alternate between them, so a stale output shows
constexpr size_t in_flight = 4;   // for the throughput runs
constexpr size_t batch = 16;      // outputs per throughput batch, checked between batches
constexpr int rounds = 5;         // turns each side takes, alternating

struct Percentiles {
    double median = 0;
    double p99 = 0;
};

Percentiles summarize(std::vector<double> samples)
{
    if (samples.empty())
        return {};
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) { return samples[std::min(samples.size() - 1, size_t(q * double(samples.size())))]; };
    return {at(0.5), at(0.99)};
}

// A sealed memfd, mapped: the frames of both sides live in these.
struct FrameBuffer {
    UniqueFd fd;
    cli::BufferMapping mapping;
};

FrameBuffer frameBuffer(uint64_t size)
{
    const framecl_allocate_options memfd{FRAMECL_BUFFERS_MEMFD, nullptr};
    UniqueFd fd(framecl_allocate_buffer(&memfd, size, nullptr));
    if (!fd.valid())
        throw std::runtime_error(framecl_last_error(nullptr));
    auto mapping = cli::BufferMapping::map(fd.get(), size);
    if (!mapping)
        throw std::runtime_error(mapping.error().message);
    return {std::move(fd), std::move(*mapping)};
}

UniqueFd duplicate(const UniqueFd& fd)
{
    UniqueFd copy(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
    if (!copy.valid())
        throw std::runtime_error("F_DUPFD_CLOEXEC failed");
    return copy;
}

// Two inputs of noise (so no one can take a shortcut on zeros, and consecutive frames
// differ) and `outputs` outputs, zeroed before each use.
struct Buffers {
    framecl_frame_layout layout{};
    uint64_t size = 0;
    std::vector<FrameBuffer> in, out;
    uint64_t mismatches = 0;

    Buffers(uint32_t width, uint32_t height, size_t outputs)
    {
        size = framecl_packed_layout(DRM_FORMAT_NV12, width, height, &layout);
        std::mt19937 random(1);
        for (size_t i = 0; i < inputs; ++i) {
            in.push_back(frameBuffer(size));
            for (uint8_t& byte : in.back().mapping.bytes())
                byte = uint8_t(random());
        }
        for (size_t i = 0; i < outputs; ++i)
            out.push_back(frameBuffer(size));
    }

    void clear(size_t output) { std::memset(out[output].mapping.bytes().data(), 0, size); }
    // `copy` gives its input back.
    void check(size_t input, size_t output)
    {
        if (std::memcmp(in[input].mapping.bytes().data(), out[output].mapping.bytes().data(), size) != 0)
            ++mismatches;
    }
};

// Frames per second over `frames` frames, run in batches as large as the outputs:
// `run(count)` runs one batch of `count` frames, frame i from input i mod 2 into output
// i. The outputs are zeroed before and checked after each batch, outside the timing.
template <typename RunBatch> double batchedThroughput(Buffers& buffers, int frames, RunBatch&& run)
{
    double seconds = 0;
    for (int done = 0; done < frames;) {
        const size_t count = std::min<size_t>(buffers.out.size(), size_t(frames - done));
        for (size_t o = 0; o < count; ++o)
            buffers.clear(o);
        const auto start = Clock::now();
        run(count);
        seconds += std::chrono::duration<double>(Clock::now() - start).count();
        for (size_t o = 0; o < count; ++o)
            buffers.check(o % inputs, o);
        done += int(count);
    }
    return frames / seconds;
}

// Where a daemon frame's time goes, in µs per frame (docs/benchmarks.md, "A frame's hops").
struct Hops {
    std::vector<double> to_daemon;   // submit called → the daemon has the Submit (queued_ns)
    std::vector<double> to_enqueue;  // → the frame is enqueued (start_ns)
    std::vector<double> on_device;   // → its last command ended on the device (gpu_end_ns)
    std::vector<double> to_callback; // → the runtime's completion callback (callback_ns)
    std::vector<double> to_loop;     // → the daemon's loop handled it and sent the Done (end_ns)
    std::vector<double> to_client;   // → framecl_next_done returned in the client

    void add(uint64_t submitted, const framecl_done& done, uint64_t received)
    {
        const auto us = [](uint64_t from, uint64_t to) { return double(int64_t(to - from)) / 1e3; };
        to_daemon.push_back(us(submitted, done.queued_ns));
        to_enqueue.push_back(us(done.queued_ns, done.start_ns));
        if (done.gpu_end_ns && done.callback_ns) {
            on_device.push_back(us(done.start_ns, done.gpu_end_ns));
            to_callback.push_back(us(done.gpu_end_ns, done.callback_ns));
            to_loop.push_back(us(done.callback_ns, done.end_ns));
        }
        to_client.push_back(us(done.end_ns, received));
    }

    nlohmann::json json() const
    {
        nlohmann::json result = nlohmann::json::object();
        const std::pair<const char*, const std::vector<double>*> hops[] = {
            {"to_daemon", &to_daemon}, {"to_enqueue", &to_enqueue},   {"on_device", &on_device},
            {"to_callback", &to_callback}, {"to_loop", &to_loop}, {"to_client", &to_client}};
        for (const auto& [name, samples] : hops) {
            const Percentiles p = summarize(*samples);
            result[name] = {{"median", p.median}, {"p99", p.p99}, {"frames", samples->size()}};
        }
        return result;
    }
};

class DaemonSide {
public:
    DaemonSide(framecl_client* client, Buffers& buffers, uint32_t width, uint32_t height)
        : client_(client), buffers_(buffers)
    {
        for (auto& buffer : buffers.in)
            in_ids_.push_back(registered(buffer));
        for (auto& buffer : buffers.out)
            out_ids_.push_back(registered(buffer));
        for (uint32_t* session : {&session_, &chained_session_})
            if (framecl_open_session(client, "copy", DRM_FORMAT_NV12, width, height, nullptr, 0, session, nullptr))
                throw std::runtime_error(framecl_last_error(client));
    }
    ~DaemonSide()
    {
        framecl_close_session(client_, session_);
        framecl_close_session(client_, chained_session_);
        for (uint32_t id : in_ids_)
            framecl_release_buffer(client_, id);
        for (uint32_t id : out_ids_)
            framecl_release_buffer(client_, id);
    }

    // One frame in flight, each `period` after the one before (0: back to back): Submit
    // to Done, in µs, per timed frame.
    std::vector<double> latency(int warmup, int frames, Clock::duration period, Hops& hops)
    {
        std::vector<double> samples;
        const auto start = Clock::now();
        for (int i = 0; i < warmup + frames; ++i) {
            const size_t input = size_t(i) % inputs;
            buffers_.clear(0);
            std::this_thread::sleep_until(start + i * period);
            const uint64_t submitted = monotonicNs();
            submit(input, 0, uint64_t(i));
            const framecl_done done = next();
            const uint64_t received = monotonicNs();
            buffers_.check(input, 0);
            if (i >= warmup) {
                samples.push_back(double(received - submitted) / 1e3);
                hops.add(submitted, done, received);
            }
        }
        return samples;
    }

    // Chains of two frames, input to output 0 and, in a second session, output 0 to
    // output 1, each chain `period` after the one before: µs from the first Submit to
    // the second Done. `wait_between`: the second Submit goes once the first Done came;
    // otherwise right after the first.
    std::vector<double> chain(int warmup, int chains, Clock::duration period, bool wait_between)
    {
        std::vector<double> samples;
        const auto start = Clock::now();
        for (int i = 0; i < warmup + chains; ++i) {
            const size_t input = size_t(i) % inputs;
            buffers_.clear(0);
            buffers_.clear(1);
            std::this_thread::sleep_until(start + i * period);
            const uint64_t submitted = monotonicNs();
            submit(input, 0, uint64_t(2 * i));
            if (wait_between)
                next();
            if (framecl_submit(client_, chained_session_, out_ids_[0], out_ids_[1], uint64_t(2 * i + 1)))
                throw std::runtime_error(framecl_last_error(client_));
            if (!wait_between)
                next();
            next();
            const uint64_t received = monotonicNs();
            buffers_.check(input, 1);
            if (i >= warmup)
                samples.push_back(double(received - submitted) / 1e3);
        }
        return samples;
    }

    // `in_flight` frames in flight: frames per second.
    double throughput(int frames)
    {
        return batchedThroughput(buffers_, frames, [&](size_t count) {
            size_t submitted = 0, received = 0;
            while (received < count) {
                if (submitted < count && submitted - received < in_flight) {
                    submit(submitted % inputs, submitted, submitted);
                    ++submitted;
                    continue;
                }
                next();
                ++received;
            }
        });
    }

private:
    uint32_t registered(FrameBuffer& buffer)
    {
        uint32_t id = 0;
        if (framecl_register_buffer(client_, buffer.fd.get(), &buffers_.layout, &id))
            throw std::runtime_error(framecl_last_error(client_));
        return id;
    }
    void submit(size_t input, size_t output, uint64_t sequence)
    {
        if (framecl_submit(client_, session_, in_ids_[input], out_ids_[output], sequence))
            throw std::runtime_error(framecl_last_error(client_));
    }
    framecl_done next()
    {
        framecl_done done{};
        if (framecl_next_done(client_, 10000, &done) || done.status != FRAMECL_FRAME_OK)
            throw std::runtime_error(fmt::format("frame {}: {} {}", done.sequence, framecl_last_error(client_), done.error));
        return done;
    }

    framecl_client* client_;
    Buffers& buffers_;
    uint32_t session_ = 0;
    uint32_t chained_session_ = 0; // the second frame of a chain
    std::vector<uint32_t> in_ids_, out_ids_;
};

class InProcessSide {
public:
    InProcessSide(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> copy,
                  gpu::RecordingMode recording, Buffers& buffers, uint32_t width, uint32_t height)
        : gpu_(gpu), buffers_(buffers)
    {
        const uint64_t pixels = uint64_t(width) * height;
        for (auto& buffer : buffers.in)
            in_.push_back(imported(buffer, pixels));
        for (auto& buffer : buffers.out)
            out_.push_back(imported(buffer, pixels));
        auto session = pipeline::Session::open(gpu, std::move(copy), {DRM_FORMAT_NV12, width, height},
                                               {recording, true, {}, 0});
        if (!session)
            throw std::runtime_error(session.error().message);
        session_ = std::move(*session);
    }

    std::vector<double> latency(int warmup, int frames, Clock::duration period)
    {
        std::vector<double> samples;
        const auto first = Clock::now();
        for (int i = 0; i < warmup + frames; ++i) {
            const size_t input = size_t(i) % inputs;
            buffers_.clear(0);
            std::this_thread::sleep_until(first + i * period);
            const auto start = Clock::now();
            wait(enqueue(input, 0));
            const auto end = Clock::now();
            buffers_.check(input, 0);
            if (i >= warmup)
                samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
        }
        return samples;
    }

    double throughput(int frames)
    {
        return batchedThroughput(buffers_, frames, [&](size_t count) {
            std::deque<pipeline::ClientFrame> pending;
            for (size_t f = 0; f < count; ++f) {
                if (pending.size() == in_flight) {
                    wait(pending.front());
                    pending.pop_front();
                }
                pending.push_back(enqueue(f % inputs, f));
            }
            for (auto& frame : pending)
                wait(frame);
        });
    }

private:
    std::shared_ptr<memory::ImportedBuffer> imported(FrameBuffer& buffer, uint64_t pixels)
    {
        auto imported = memory::importBuffer(gpu_, duplicate(buffer.fd), buffers_.layout, pixels);
        if (!imported)
            throw std::runtime_error(imported.error().message);
        return *imported;
    }
    // The daemon's own way, copies included where the device needs them (host-copy).
    pipeline::ClientFrame enqueue(size_t input, size_t output)
    {
        auto frame = pipeline::enqueueClientFrame(*session_, *in_[input], *out_[output]);
        if (!frame)
            throw std::runtime_error(frame.error().message);
        gpu_.queue().flush();
        return std::move(*frame);
    }
    static void wait(const pipeline::ClientFrame& frame)
    {
        if (frame.done.wait() != CL_SUCCESS)
            throw std::runtime_error("an in-process frame failed");
    }

    const gpu::GpuContext& gpu_;
    Buffers& buffers_;
    std::vector<std::shared_ptr<memory::ImportedBuffer>> in_, out_;
    std::unique_ptr<pipeline::Session> session_;
};

void printTables(const nlohmann::json& report)
{
    fmt::print("NV12 through `copy` on {}, {} timed frames per run after {} of warm-up, the daemon and in-process "
               "taking {} turns each; every output checked\n\n",
               report["device"].get<std::string>(), report["frames"].get<int>(), report["warmup"].get<int>(), rounds);
    const double fps = report["fps"].get<double>();
    fmt::print("One frame in flight{}, µs from submit to done:\n\n",
               fps > 0 ? fmt::format(", one every 1/{} s", fps) : std::string(", back to back"));
    fmt::print("| size | daemon median | daemon p99 | in-process median | in-process p99 | daemon − in-process (median) |\n");
    fmt::print("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : report["results"]) {
        const auto& d = r["daemon_us"];
        const auto& p = r["in_process_us"];
        fmt::print("| {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:+.0f} |\n", r["size"].get<std::string>(),
                   d["median"].get<double>(), d["p99"].get<double>(), p["median"].get<double>(), p["p99"].get<double>(),
                   d["median"].get<double>() - p["median"].get<double>());
    }
    fmt::print("\n{} frames in flight, frames per second:\n\n", in_flight);
    fmt::print("| size | daemon fps | in-process fps | daemon / in-process |\n| --- | ---: | ---: | ---: |\n");
    for (const auto& r : report["results"])
        fmt::print("| {} | {:.0f} | {:.0f} | {:.0f}% |\n", r["size"].get<std::string>(), r["daemon_fps"].get<double>(),
                   r["in_process_fps"].get<double>(),
                   100 * r["daemon_fps"].get<double>() / r["in_process_fps"].get<double>());
    fmt::print("\nA daemon frame's hops, one frame in flight, µs, median / p99:\n\n");
    fmt::print("| size | submit → daemon | → enqueued | → GPU done | → callback | → Done sent | → client woken |\n");
    fmt::print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : report["results"]) {
        const auto& h = r["hops_us"];
        std::string row = fmt::format("| {} |", r["size"].get<std::string>());
        for (const char* hop : {"to_daemon", "to_enqueue", "on_device", "to_callback", "to_loop", "to_client"})
            row += h[hop]["frames"].get<size_t>() ? fmt::format(" {:.0f} / {:.0f} |", h[hop]["median"].get<double>(),
                                                                 h[hop]["p99"].get<double>())
                                                   : std::string(" – |");
        fmt::print("{}\n", row);
    }
    fmt::print("\nTwo frames chained through a buffer (`copy`, then `copy` of its output), one chain in flight, "
               "µs from the first Submit to the second Done:\n\n");
    fmt::print("| size | waiting for the first Done: median | p99 | submitted together: median | p99 | "
               "together − waiting (median) |\n");
    fmt::print("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& r : report["results"]) {
        const auto& waiting = r["chain_us"]["waiting"];
        const auto& together = r["chain_us"]["together"];
        fmt::print("| {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:+.0f} |\n", r["size"].get<std::string>(),
                   waiting["median"].get<double>(), waiting["p99"].get<double>(), together["median"].get<double>(),
                   together["p99"].get<double>(), together["median"].get<double>() - waiting["median"].get<double>());
    }
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecl-transport-bench: frames through framecld against the same pipeline in-process, every "
                 "output checked"};
    std::string socket;
    std::filesystem::path config_file = config::defaultConfigFile();
    int frames = 500, warmup = 50;
    double fps = 0;
    bool json = false;
    std::vector<std::string> sizes{"640x480", "1920x1080"};
    app.add_option("--socket", socket, "framecld's socket (default: $FRAMECL_SOCKET, then the library default)");
    app.add_option("--config", config_file, "config whose gpu.device and kernel_dirs the in-process run uses")
        ->capture_default_str();
    app.add_option("--frames", frames, "timed frames per run")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--warmup", warmup, "untimed frames first")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--size", sizes, "WxH, repeatable")->capture_default_str();
    app.add_option("--fps", fps, "One-in-flight frames at this rate, as a camera sends them; 0: back to back")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--json", json, "JSON instead of markdown tables");
    CLI11_PARSE(app, argc, argv);
    log::setup(log::Sink::Stderr, spdlog::level::warn);

    auto config = config::loadConfigFile(config_file, config::defaultPaths());
    if (!config) {
        fmt::print(stderr, "{}\n", config.error().joined());
        return 1;
    }
    auto engine = pipeline::startEngine(*config);
    if (!engine) {
        fmt::print(stderr, "{}\n", engine.error().message);
        return 1;
    }
    const gpu::GpuContext& gpu = *engine->gpu;
    const pipeline::PipelineSet& set = engine->pipelines;
    // The same replay the daemon would use, so only the transport differs.
    const gpu::RecordingMode recording =
        gpu::chooseRecordingMode(gpu.capabilities(), gpu.vendor(), config->gpu.recording);
    auto client = cli::connectToDaemon({socket, 5000, "framecl-transport-bench"});
    if (!client) {
        fmt::print(stderr, "{}\n", client.error().message);
        return 1;
    }

    nlohmann::json results = nlohmann::json::array();
    uint64_t mismatches = 0;
    try {
        for (const auto& text : sizes) {
            uint32_t width = 0, height = 0;
            if (std::sscanf(text.c_str(), "%ux%u", &width, &height) != 2) {
                fmt::print(stderr, "--size {}: expected WxH\n", text);
                return 1;
            }
            Buffers buffers(width, height, batch);
            Hops hops;
            DaemonSide daemon(client->get(), buffers, width, height);
            InProcessSide local(gpu, set.catalog.find("copy"), recording, buffers, width, height);
            const auto period = std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(fps > 0 ? 1.0 / fps : 0.0));
            // The two sides take turns, a part of the frames each time, so that a machine
            // whose speed drifts during the run (a shared host, its clocks) weighs on both
            // alike. Each turn after the first warms up briefly again.
            std::vector<double> daemon_samples, local_samples, waiting_samples, together_samples;
            double daemon_seconds = 0, local_seconds = 0;
            for (int round = 0; round < rounds; ++round) {
                const int count = frames / rounds + (round < frames % rounds ? 1 : 0);
                const int round_warmup = round == 0 ? warmup : std::min(warmup, 5);
                if (count == 0)
                    continue;
                for (double sample : daemon.latency(round_warmup, count, period, hops))
                    daemon_samples.push_back(sample);
                for (double sample : local.latency(round_warmup, count, period))
                    local_samples.push_back(sample);
                for (double sample : daemon.chain(round_warmup, count, period, true))
                    waiting_samples.push_back(sample);
                for (double sample : daemon.chain(round_warmup, count, period, false))
                    together_samples.push_back(sample);
                daemon_seconds += count / daemon.throughput(count);
                local_seconds += count / local.throughput(count);
            }
            const auto daemon_latency = summarize(daemon_samples), local_latency = summarize(local_samples);
            const auto waiting = summarize(waiting_samples), together = summarize(together_samples);
            const double daemon_fps = frames / daemon_seconds, local_fps = frames / local_seconds;
            mismatches += buffers.mismatches;
            results.push_back({{"size", text},
                               {"daemon_us", {{"median", daemon_latency.median}, {"p99", daemon_latency.p99}}},
                               {"in_process_us", {{"median", local_latency.median}, {"p99", local_latency.p99}}},
                               {"daemon_fps", daemon_fps},
                               {"in_process_fps", local_fps},
                               {"hops_us", hops.json()},
                               {"chain_us",
                                {{"waiting", {{"median", waiting.median}, {"p99", waiting.p99}}},
                                 {"together", {{"median", together.median}, {"p99", together.p99}}}}},
                               {"mismatches", buffers.mismatches}});
        }
    } catch (const std::exception& error) {
        fmt::print(stderr, "framecl-transport-bench: {}\n", error.what());
        return 1;
    }

    const nlohmann::json report{{"device", gpu.capabilities().name}, {"frames", frames}, {"warmup", warmup},
                                {"fps", fps}, {"results", results}};
    if (json)
        fmt::print("{}\n", report.dump(2));
    else
        printTables(report);
    if (mismatches > 0) {
        fmt::print(stderr, "framecl-transport-bench: {} outputs differ from their input\n", mismatches);
        return 1;
    }
    return 0;
}
