// Sharing the GPU through a real framecld on PoCL: a light client beside a flooding
// one, backpressure and deadlines with exactly one Done per Submit, client classes'
// weights, the budget's tiles in the stats, and `framecl trace`.
#include <algorithm>
#include <cmath>
#include <atomic>
#include <csignal>
#include <fstream>
#include <map>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/monotonic_clock.hpp"
#include "child_process.hpp"
#include "daemon_client.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace std::chrono_literals;

namespace {

// `heavy` costs about 0.2 s a frame at 640x360 on a 2-core PoCL, `light` well
// under 1 ms at 160x120. No tuning: sessions open at once and stay comparable. A
// budget of a second leaves every dispatch whole.
const std::string pipelines = R"(
[gpu]
tuning = "off"
kernel_budget_ms = 1000
[[pipeline]]
name = "heavy"
stages = [ { plugin = "meanshift", sp = 5, sr = 6, variant = "baseline" } ]
[[pipeline]]
name = "light"
stages = [ { plugin = "color", op = "abgr_to_y" } ]
)";

constexpr uint32_t heavy_width = 640, heavy_height = 360;
constexpr uint32_t light_width = 160, light_height = 120;

// An open session with its own input and output buffers (one input, `outputs` outputs).
struct Stream {
    uint32_t session = 0;
    uint32_t input = 0;
    std::vector<uint32_t> outputs;
    std::vector<framecl::UniqueFd> fds;
};

Stream openStream(framecl_client* client, const char* pipeline, uint32_t width, uint32_t height, size_t outputs,
                  framecl_backpressure backpressure = FRAMECL_BACKPRESSURE_BLOCK, uint32_t deadline_us = 0)
{
    Stream stream;
    framecl_frame_layout out_layout{};
    const framecl_session_options options{backpressure, deadline_us};
    REQUIRE_MESSAGE(framecl_open_session_with(client, pipeline, DRM_FORMAT_ABGR8888, width, height, nullptr, 0,
                                              &options, &stream.session, &out_layout) == 0,
                    std::string(framecl_last_error(client)));
    uint64_t in_size = 0;
    const auto in_layout = packed(DRM_FORMAT_ABGR8888, width, height, &in_size);
    stream.fds.emplace_back();
    stream.input = registerMemfd(client, in_layout, in_size, stream.fds.back());
    for (size_t i = 0; i < outputs; ++i) {
        stream.fds.emplace_back();
        stream.outputs.push_back(registerMemfd(client, out_layout, framecl_layout_end(&out_layout), stream.fds.back()));
    }
    return stream;
}

std::unique_ptr<ChildProcess> camera(const RunningDaemon& daemon, const std::string& name, const std::string& pipeline,
                                     const std::string& size, const std::string& backpressure = "block")
{
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(), "--name",
                                 name, "--pipeline", pipeline, "--format", "abgr8888", "--size", size, "--fps", "0",
                                 "--frames", "1000000", "--backpressure", backpressure, "--timeout", "20000"},
        std::map<std::string, std::string>{}, daemon.dir().path());
}

const nlohmann::json* clientNamed(const nlohmann::json& stats, const std::string& name)
{
    for (const auto& client : stats["clients"])
        if (client["name"] == name)
            return &client;
    return nullptr;
}

uint64_t framesDone(framecl_client* observer, const std::string& name)
{
    const auto now = stats(observer);
    const nlohmann::json* client = clientNamed(now, name);
    if (!client || (*client)["sessions"].empty())
        return 0;
    return (*client)["sessions"][0]["frames_done"].get<uint64_t>();
}

// A frame's times from its Done (the daemon's CLOCK_MONOTONIC, as steady_clock here).
struct FrameTimes {
    uint64_t queued_ns, start_ns, gpu_end_ns, end_ns;
};

// A client of its own flooding a pipeline (`heavy` unless named) at a size, four frames
// in flight, that keeps each Done's times.
class FloodingClient {
public:
    FloodingClient(const RunningDaemon& daemon, const char* name, uint32_t width, uint32_t height,
                   const char* pipeline = "heavy")
        : client_(connectTo(daemon, name)), stream_(openStream(client_, pipeline, width, height, 4))
    {
    }

    // Runs until `stop`; then waits out the frames in flight.
    void run(const std::atomic<bool>& stop)
    {
        uint64_t submitted = 0, outstanding = 0;
        while (!stop || outstanding > 0) {
            if (!stop && outstanding < 4) {
                failures_ += framecl_submit(client_, stream_.session, stream_.input, stream_.outputs[submitted % 4],
                                            submitted) != 0;
                ++submitted;
                ++outstanding;
                continue;
            }
            framecl_done done{};
            if (framecl_next_done(client_, 30000, &done) != 0 || done.status != FRAMECL_FRAME_OK) {
                ++failures_;
                return;
            }
            --outstanding;
            frames_.push_back({done.queued_ns, done.start_ns, done.gpu_end_ns, done.end_ns});
        }
    }

    // The part of [from, to) its frames were on the GPU.
    double held(uint64_t from, uint64_t to) const
    {
        uint64_t ns = 0;
        for (const FrameTimes& frame : frames_)
            if (frame.end_ns > from && frame.start_ns < to)
                ns += std::min(frame.end_ns, to) - std::max(frame.start_ns, from);
        return double(ns) / double(to - from);
    }
    size_t frames() const { return frames_.size(); }
    const std::vector<FrameTimes>& times() const { return frames_; }
    int failures() const { return failures_; }

private:
    Client client_;
    Stream stream_;
    std::vector<FrameTimes> frames_;
    int failures_ = 0;
};

// The q-quantile of `sorted` by nearest rank. Latencies are checked at the p95: of the
// 60 or 90 frames of a test the p99 is the slowest, and one stall of a loaded machine
// decides it (under ASan in CI one light frame took 167 ms against a bound of 98 ms,
// having waited 0.05 ms to start), while a scheduler at fault delays most frames.
double nearestRank(const std::vector<double>& sorted, double q)
{
    return sorted[size_t(std::ceil(q * double(sorted.size()))) - 1];
}

// Floods with every client at once for 1 s of warm-up and a 4 s window, and returns
// the part of the window each held the GPU.
std::vector<double> floodAndMeasure(const std::vector<FloodingClient*>& clients)
{
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (FloodingClient* client : clients)
        threads.emplace_back([client, &stop] { client->run(stop); });
    std::this_thread::sleep_for(1s);
    const uint64_t from = framecl::monotonicNs();
    std::this_thread::sleep_for(4s);
    const uint64_t to = framecl::monotonicNs();
    stop = true;
    for (auto& thread : threads)
        thread.join();
    std::vector<double> shares;
    for (const FloodingClient* client : clients) {
        CHECK(client->failures() == 0);
        shares.push_back(client->held(from, to));
    }
    return shares;
}

void waitForFrames(framecl_client* observer, const std::string& name, uint64_t frames)
{
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (framesDone(observer, name) < frames && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    // The stats read before the check, not in its message: the message is formed while
    // the check is reported (a success too, under -s), and an assertion inside it waits
    // forever on doctest's reporter, which that report holds.
    const std::string seen = stats(observer).dump();
    REQUIRE_MESSAGE(framesDone(observer, name) >= frames, seen);
}

// How long a `framecl trace` must last to hold whole frames of a client's session. A
// trace holds the dispatches of the frames that end in it, and on a loaded machine a
// heavy frame takes seconds: CI's plain stage found no whole heavy frame in windows of
// 1 and 2 s, and beside a CPU hog here one takes 2 to 3 s. The window lasts three
// frames as the daemon has timed them so far (the first stage's tiles times the
// longest tile), at least 5 s and at most 30: the timing is of the first frames, and
// later ones can be cut finer and run longer (here, beside a hog, 90 tiles of 6.4 ms
// became 180 of 7.6).
int traceSeconds(framecl_client* observer, const std::string& name)
{
    const auto now = stats(observer);
    const nlohmann::json* client = clientNamed(now, name);
    REQUIRE(client);
    const auto& stage = (*client)["sessions"][0]["stages"][0];
    const double frame_s = stage["tiles"].get<uint32_t>() * stage["longest_dispatch_ms"].get<double>() / 1000;
    const int window_s = std::clamp(int(std::ceil(3 * frame_s)), 5, 30);
    MESSAGE("a ", name, " frame takes up to ", frame_s, " s: a trace of ", window_s, " s");
    return window_s;
}

// Submits `frames` frames of `stream` at 30 fps, each to the next of its four outputs,
// and returns every Done in the order they came. Like a camera with four buffers, it
// waits for a Done before a fifth frame when all four are in flight: on a slow machine a
// heavy frame outlasts more than the eight frames the daemon holds for a client
// (limits.max_inflight_per_client and as many waiting), and at a fixed rate the ninth
// would be refused. A frame's latency counts from its Submit, so waiting here adds none.
std::vector<framecl_done> streamAt30Fps(framecl_client* client, const Stream& stream, int frames)
{
    constexpr auto interval = std::chrono::microseconds(1'000'000 / 30);
    constexpr size_t buffers = 4;
    std::vector<framecl_done> dones;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < frames; ++i) {
        std::this_thread::sleep_until(start + i * interval);
        if (size_t(i) - dones.size() == buffers)
            dones.push_back(nextDone(client));
        REQUIRE(framecl_submit(client, stream.session, stream.input, stream.outputs[size_t(i) % buffers], uint64_t(i)) ==
                0);
        framecl_done done{};
        while (framecl_next_done(client, 0, &done) == 0)
            dones.push_back(done);
    }
    while (dones.size() < size_t(frames))
        dones.push_back(nextDone(client));
    return dones;
}

} // namespace

TEST_CASE("a light client at 30 fps keeps every frame while a heavy client floods the GPU")
{
    RunningDaemon daemon(pipelines);
    auto heavy = camera(daemon, "heavy", "heavy", "640x360");
    Client observer = connectTo(daemon, "observer");
    waitForFrames(observer, "heavy", 3);

    Client light = connectTo(daemon, "light");
    Stream stream = openStream(light, "light", light_width, light_height, 4);
    constexpr int frames = 60;
    const std::vector<framecl_done> dones = streamAt30Fps(light, stream, frames);

    // The heavy client's longest frame (one dispatch: the budget is too large to tile it)
    // as the daemon saw it.
    const auto seen = stats(observer);
    const nlohmann::json* heavy_stats = clientNamed(seen, "heavy");
    REQUIRE(heavy_stats);
    const double heavy_max_ms = (*heavy_stats)["sessions"][0]["stages"][0]["longest_dispatch_ms"].get<double>();
    REQUIRE(heavy_max_ms > 0);
    heavy->signal(SIGTERM);
    heavy->wait(10s);

    std::vector<double> latencies_ms;
    for (int i = 0; i < frames; ++i) {
        CHECK(dones[size_t(i)].sequence == uint64_t(i));
        CHECK_MESSAGE(dones[size_t(i)].status == FRAMECL_FRAME_OK, dones[size_t(i)].error, " (", dones[size_t(i)].sequence, ")");
        latencies_ms.push_back(double(dones[size_t(i)].end_ns - dones[size_t(i)].queued_ns) / 1e6);
    }
    std::sort(latencies_ms.begin(), latencies_ms.end());
    const double p95 = nearestRank(latencies_ms, 0.95);
    // A light frame waits for at most the heavy frame on the GPU when it arrives.
    const double bound_ms = 1000.0 / 30 + heavy_max_ms;
    MESSAGE("light p95 ", p95, " ms, slowest ", latencies_ms.back(), " ms; bound ", bound_ms, " ms");
    CHECK(p95 < bound_ms);
    CHECK((*heavy_stats)["sessions"][0]["frames_done"].get<uint64_t>() > 3);
}

TEST_CASE("under a kernel budget a light frame starts between a heavy frame's tiles, as framecl trace shows")
{
    // The heavy frame (0.4 to 0.9 s here at 960x540) is cut into tiles of under 15 ms.
    // A light frame that arrives waits for the tile on the GPU and at most one queued
    // behind it, not for the rest of the heavy frame: its p95 stays within a few tiles,
    // where a scheduler that chose between clients only at frame boundaries gave most of
    // a heavy frame to nearly every light frame. Both the list replay (every tile a
    // boundary) and khr (the recording cut into parts).
    for (const std::string recording : {"off", "khr"}) {
        CAPTURE(recording);
        std::string config = pipelines;
        config.replace(config.find("kernel_budget_ms = 1000"), 23,
                       fmt::format("kernel_budget_ms = 15\nrecording = \"{}\"", recording));
        RunningDaemon daemon(config);
        // Larger than elsewhere so the frame is many tiles on a faster machine too: at
        // 640x360 CI's ASan stage once got 15 where this machine gets 23 to 45.
        auto heavy = camera(daemon, "heavy", "heavy", "960x540");
        Client observer = connectTo(daemon, "observer");
        waitForFrames(observer, "heavy", 3);

        // The window starts once the light session is open, and the light client
        // streams through it and a second past it.
        const int window_s = traceSeconds(observer, "heavy");
        Client light = connectTo(daemon, "light");
        Stream stream = openStream(light, "light", light_width, light_height, 4);
        const auto trace_file = daemon.dir().path() / "trace.json";
        ChildProcess trace({requireEnv("FRAMECL_CLI"), "trace", "--socket", daemon.socket().string(), "--seconds",
                            std::to_string(window_s), "-o", trace_file.string()},
                           {}, daemon.dir().path());
        const int frames = (window_s + 1) * 30;
        const std::vector<framecl_done> dones = streamAt30Fps(light, stream, frames);
        const auto traced = trace.wait(std::chrono::seconds(window_s + 30));
        REQUIRE(traced);
        CHECK_MESSAGE(traced->code == 0, trace.stderrText());

        const auto seen = stats(observer);
        heavy->signal(SIGTERM);
        heavy->wait(10s);
        const nlohmann::json* heavy_stats = clientNamed(seen, "heavy");
        REQUIRE(heavy_stats);
        const auto& stage = (*heavy_stats)["sessions"][0]["stages"][0];
        MESSAGE(stage.dump());
        const double tile_ms = stage["longest_dispatch_ms"].get<double>();
        // Enough tiles that a frame-granular wait (most of a frame) is far over the bound.
        REQUIRE(stage["tiles"].get<uint32_t>() >= 16);

        std::vector<double> latencies_ms;
        for (const framecl_done& done : dones) {
            CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
            latencies_ms.push_back(double(done.end_ns - done.queued_ns) / 1e6);
        }
        std::sort(latencies_ms.begin(), latencies_ms.end());
        const double p95 = nearestRank(latencies_ms, 0.95);
        // The tile running, one queued behind it, one more while the learned costs lag a
        // change in the machine's load (the scheduler queues by predictions: 118 ms at
        // the p95 against a bound of 3 tiles, 112 ms, when a second test started beside
        // CI's), the light frame's own work and a loaded machine's delays in waking the
        // processes. A heavy frame is 40 to 100 tiles.
        const double bound_ms = 4 * tile_ms + 20;
        MESSAGE("light p95 ", p95, " ms, slowest ", latencies_ms.back(), " ms; bound ", bound_ms,
                " ms (longest heavy tile ", tile_ms, " ms)");
        // Where the slowest frame's time went, for a failure to say: waiting for the GPU
        // (queued to start), or after it (start to end).
        const auto slowest = std::max_element(dones.begin(), dones.end(), [](const auto& a, const auto& b) {
            return a.end_ns - a.queued_ns < b.end_ns - b.queued_ns;
        });
        MESSAGE("slowest light frame ", slowest->sequence, ": waited ",
                double(slowest->start_ns - slowest->queued_ns) / 1e6, " ms, then ",
                double(slowest->end_ns - slowest->start_ns) / 1e6, " ms to its Done");
        CHECK(p95 < bound_ms);

        // In the trace, a light frame's dispatch between two tiles of one heavy frame.
        std::ifstream file(trace_file);
        const auto json = nlohmann::json::parse(file);
        std::map<std::string, std::string> lane_of; // tid -> lane name
        for (const auto& event : json["traceEvents"])
            if (event["ph"] == "M" && event["name"] == "thread_name")
                lane_of[event["tid"].dump()] = event["args"]["name"].get<std::string>();
        std::map<uint64_t, std::pair<double, double>> heavy_frames; // sequence -> first start, last end
        std::vector<std::pair<double, double>> light_slices;
        for (const auto& event : json["traceEvents"]) {
            if (event["ph"] != "X")
                continue;
            const double from = event["ts"].get<double>(), to = from + event["dur"].get<double>();
            if (contains(lane_of[event["tid"].dump()], "heavy")) {
                auto [it, fresh] = heavy_frames.try_emplace(event["args"]["sequence"].get<uint64_t>(), from, to);
                it->second = {std::min(it->second.first, from), std::max(it->second.second, to)};
            } else if (contains(lane_of[event["tid"].dump()], "light")) {
                light_slices.emplace_back(from, to);
            }
        }
        size_t inside = 0;
        for (const auto& [from, to] : light_slices)
            for (const auto& [sequence, span] : heavy_frames)
                inside += from > span.first && to < span.second;
        MESSAGE(light_slices.size(), " light slices, ", inside, " inside one of ", heavy_frames.size(),
                " heavy frames");
        CHECK(inside > 0);
    }
}

TEST_CASE("every Submit gets exactly one Done under each backpressure mode, with a client killed mid-stream")
{
    const std::pair<framecl_backpressure, const char*> modes[] = {{FRAMECL_BACKPRESSURE_BLOCK, "block"},
                                                                   {FRAMECL_BACKPRESSURE_REJECT, "reject"},
                                                                   {FRAMECL_BACKPRESSURE_DROP_OLDEST, "drop_oldest"}};
    for (const auto& each : modes) {
        const framecl_backpressure mode = each.first; // not bindings: clang 14 captures none
        const char* const name = each.second;
        CAPTURE(name);
        RunningDaemon daemon(pipelines + "[limits]\nmax_inflight_per_client = 2\n");
        auto victim = camera(daemon, "victim", "heavy", "640x360", name);
        Client client = connectTo(daemon, "survivor");
        waitForFrames(client, "victim", 2);

        // Four Submits outstanding against a limit of two: block holds two, reject
        // refuses them, drop_oldest replaces the waiting one.
        Stream stream = openStream(client, "heavy", heavy_width, heavy_height, 4, mode);
        constexpr uint64_t submits = 24;
        std::map<uint64_t, int> dones_of;
        std::map<framecl_frame_status, int> statuses;
        uint64_t submitted = 0, outstanding = 0;
        std::vector<uint64_t> order; // of the Dones
        while (submitted < submits || outstanding > 0) {
            if (submitted < submits && outstanding < 4) {
                REQUIRE(framecl_submit(client, stream.session, stream.input, stream.outputs[submitted % 4],
                                       submitted) == 0);
                ++submitted;
                ++outstanding;
                continue;
            }
            const framecl_done done = nextDone(client, 30000);
            ++dones_of[done.sequence];
            order.push_back(done.sequence);
            ++statuses[done.status];
            --outstanding;
            if (submitted == 8 && victim) {
                victim->signal(SIGKILL);
                REQUIRE(victim->wait(10s));
                victim.reset();
            }
        }
        framecl_done extra{};
        CHECK(framecl_next_done(client, 300, &extra) == -ETIMEDOUT);
        REQUIRE(dones_of.size() == submits);
        for (const auto& [sequence, count] : dones_of) {
            const uint64_t named = sequence; // CHECK_MESSAGE's lambda cannot take a binding (clang 14)
            CHECK_MESSAGE(count == 1, "sequence " << named);
        }
        CHECK(statuses[FRAMECL_FRAME_FAILED] == 0);
        CHECK(statuses[FRAMECL_FRAME_LOST] == 0);
        if (mode == FRAMECL_BACKPRESSURE_BLOCK) {
            CHECK(statuses[FRAMECL_FRAME_OK] == int(submits));
            // Held Submits are queued in the order they came, before any later one:
            // one session's frames end in the order they were submitted.
            CHECK(std::is_sorted(order.begin(), order.end()));
        }
        if (mode == FRAMECL_BACKPRESSURE_REJECT)
            CHECK(statuses[FRAMECL_FRAME_BUSY] > 0);
        if (mode == FRAMECL_BACKPRESSURE_DROP_OLDEST)
            CHECK(statuses[FRAMECL_FRAME_DROPPED] > 0);
        CHECK(statuses[FRAMECL_FRAME_OK] > 0);

        const auto after = stats(client);
        CHECK(after["released_on_disconnect"]["clients"] == 1);
        CHECK(clientNamed(after, "victim") == nullptr);
        const nlohmann::json* self = clientNamed(after, "survivor");
        REQUIRE(self);
        CHECK((*self)["frames_waiting"] == 0);
        const auto& session = (*self)["sessions"][0];
        CHECK(session["backpressure"] == name);
        CHECK(session["frames_in_flight"] == 0);
        CHECK(session["frames_done"] == statuses[FRAMECL_FRAME_OK]);
        CHECK(session["frames_busy"] == statuses[FRAMECL_FRAME_BUSY]);
        CHECK(session["frames_dropped"] == statuses[FRAMECL_FRAME_DROPPED]);
    }
}

TEST_CASE("a session that tunes opens off the loop: a streaming client's frames keep flowing meanwhile")
{
    // Tuning on: the first session of `tuned` at this size times every variant and
    // work-group shape of its stage (up to gpu.tuning_budget_ms, 2 s), which once held
    // the loop.
    // A light frame still waits for the candidate frame on the device. The slowest is
    // epsilon's image variant on PoCL: at 640x360 63 ms (175 ms with every core of a
    // 2-core machine busy), a small part of the tuning; at 1280x720 263 ms (534 ms), and
    // a loaded machine's frames waited up to half the tuning. The in-flight limit, the
    // most the config allows, leaves room for two seconds of frames at 30 fps.
    const std::string gpu = "[gpu]\nkernel_budget_ms = 1000\n";
    const std::string rest = R"(
[limits]
max_inflight_per_client = 64
[[pipeline]]
name = "light"
stages = [ { plugin = "color", op = "abgr_to_y" } ]
[[pipeline]]
name = "tuned"
stages = [ { plugin = "epsilon", radius = 4, threshold = 20 } ]
)";
    const auto openTuned = [](framecl_client* client) {
        uint32_t session = 0;
        return framecl_open_session(client, "tuned", DRM_FORMAT_R8, 640, 360, nullptr, 0, &session, nullptr);
    };
    // PoCL compiles a kernel for each work-group shape at its first run, holding the
    // lock every launch takes, and the light frames wait for the compiler: up to 1.4 s
    // for one candidate on a loaded 2-core machine, which is PoCL's and would be the same
    // with the loop free. A daemon of its own tunes first, with an hour's budget, leaving
    // every candidate in PoCL's cache (shared by the tests); the daemon measured has a
    // tuning cache of its own, so it tunes again with nothing to compile. (Under the
    // same budget the warm-up, compiling, reached 5 of the 42 candidates, and the daemon
    // measured, not compiling, 10.)
    {
        RunningDaemon warm_up(gpu + "tuning_budget_ms = 3600000\n" + rest);
        Client client = connectTo(warm_up, "warm-up", 60000);
        REQUIRE_MESSAGE(openTuned(client) == 0, framecl_last_error(client));
    }
    RunningDaemon daemon(gpu + rest);
    Client streamer = connectTo(daemon, "streamer");
    Stream stream = openStream(streamer, "light", light_width, light_height, 4);
    REQUIRE(framecl_submit(streamer, stream.session, stream.input, stream.outputs[0], 0) == 0);
    REQUIRE(nextDone(streamer).status == FRAMECL_FRAME_OK);

    Client opener = connectTo(daemon, "opener", 60000);
    std::atomic<bool> opened = false;
    double open_ms = 0;
    int open_result = -1;
    std::thread open([&] {
        const auto start = std::chrono::steady_clock::now();
        open_result = openTuned(opener);
        open_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        opened = true;
    });
    // At 30 fps for as long as the other session takes to open.
    std::vector<framecl_done> dones;
    constexpr auto interval = std::chrono::microseconds(1'000'000 / 30);
    uint64_t submitted = 0;
    for (const auto start = std::chrono::steady_clock::now(); !opened; ++submitted) {
        std::this_thread::sleep_until(start + submitted * interval);
        REQUIRE(framecl_submit(streamer, stream.session, stream.input, stream.outputs[submitted % 4],
                               submitted + 1) == 0);
        framecl_done done{};
        while (framecl_next_done(streamer, 0, &done) == 0)
            dones.push_back(done);
    }
    open.join();
    const size_t done_during_open = dones.size();
    while (dones.size() < submitted)
        dones.push_back(nextDone(streamer));

    REQUIRE_MESSAGE(open_result == 0, framecl_last_error(opener));
    double longest_ms = 0;
    for (const framecl_done& done : dones) {
        CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
        longest_ms = std::max(longest_ms, double(done.end_ns - done.queued_ns) / 1e6);
    }
    MESSAGE("the tuned session took ", open_ms, " ms to open; ", submitted, " frames submitted meanwhile, ",
            done_during_open, " of them done before it opened, the longest ", longest_ms, " ms");
    // Long enough to tell: at 30 fps, ten frames or more were submitted while it opened.
    REQUIRE(open_ms > 300);
    INFO("the daemon's log: ", daemon.log()); // what the tuner tried, in how long
    // A loop held by the tuning answers no frame until the session opens. A free one
    // answers most of them meanwhile, but not all: a frame waits on the device for the
    // candidate before it, and on a loaded 2-core machine for PoCL's compiler too (CI's
    // sanitizer stage saw a wait of 1.6 s in an open of 3.8 s). So the check is on the
    // count, with room both ways, not on the longest wait.
    CHECK(done_during_open >= submitted / 4);
}

TEST_CASE("frames that cannot start before their deadline end as dropped; alone, they all run")
{
    RunningDaemon daemon(pipelines);
    Client client = connectTo(daemon, "deadline");
    constexpr uint32_t deadline_us = 5000;
    Stream stream = openStream(client, "light", light_width, light_height, 4, FRAMECL_BACKPRESSURE_BLOCK, deadline_us);
    for (uint64_t i = 0; i < 8; ++i) {
        REQUIRE(framecl_submit(client, stream.session, stream.input, stream.outputs[i % 4], i) == 0);
        const framecl_done done = nextDone(client);
        CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    }

    // Behind heavy frames, 5 ms is too short for some of them.
    auto heavy = camera(daemon, "heavy", "heavy", "640x360");
    waitForFrames(client, "heavy", 2);
    std::map<framecl_frame_status, int> statuses;
    for (uint64_t i = 8; i < 40; ++i) {
        REQUIRE(framecl_submit(client, stream.session, stream.input, stream.outputs[i % 4], i) == 0);
        const framecl_done done = nextDone(client);
        CHECK(done.sequence == i);
        ++statuses[done.status];
        if (done.status == FRAMECL_FRAME_DROPPED) {
            CHECK(done.start_ns == 0);
            CHECK(done.end_ns - done.queued_ns >= deadline_us * 1000);
            CHECK(contains(done.error, "deadline"));
        }
        std::this_thread::sleep_for(7ms);
    }
    heavy->signal(SIGTERM);
    heavy->wait(10s);
    CHECK(statuses[FRAMECL_FRAME_DROPPED] > 0);
    CHECK(statuses[FRAMECL_FRAME_DROPPED] + statuses[FRAMECL_FRAME_OK] == 32);
    const auto session = (*clientNamed(stats(client), "deadline"))["sessions"][0];
    CHECK(session["frames_dropped"] == statuses[FRAMECL_FRAME_DROPPED]);
    CHECK(session["deadline_us"] == deadline_us);
}

TEST_CASE("flooding clients share the GPU by their classes' weights, whatever their frames cost")
{
    // The shares are checked against GPU time measured outside the scheduler's
    // accounting (which charges profiling events): each frame's start and end on the
    // daemon's host clock, as its Done reports them, summed over a window. One frame
    // is on the GPU at a time, so those spans are each client's hold on the GPU.
    SUBCASE("frames costing about 10:1, equal weights: half each")
    {
        RunningDaemon daemon(pipelines);
        FloodingClient big(daemon, "big", heavy_width, heavy_height);
        FloodingClient small(daemon, "small", 200, 116);
        const auto shares = floodAndMeasure({&big, &small});
        Client observer = connectTo(daemon, "observer");
        const auto now = stats(observer);
        MESSAGE("GPU held: big ", shares[0], ", small ", shares[1], " of the window; frames big ", big.frames(),
                ", small ", small.frames(), "; the daemon's gpu_share ", (*clientNamed(now, "big"))["gpu_share"], ", ",
                (*clientNamed(now, "small"))["gpu_share"]);
        CHECK(small.frames() > 4 * big.frames()); // the frames do differ in cost
        CHECK(shares[0] + shares[1] > 0.8);      // flooded: the GPU was hardly idle
        CHECK(shares[0] == doctest::Approx(shares[1]).epsilon(0.3));
    }
    SUBCASE("equal frames, weights 3:1 by client class: 3:1")
    {
        RunningDaemon daemon(pipelines + R"(
[[client_class]]
name = "preview"
match_name = "preview-*"
weight = 3
[[client_class]]
name = "batch"
match_name = "batch"
weight = 1
)");
        FloodingClient preview(daemon, "preview-main", 320, 180);
        FloodingClient batch(daemon, "batch", 320, 180);
        const auto shares = floodAndMeasure({&preview, &batch});
        Client observer = connectTo(daemon, "observer");
        const auto now = stats(observer);
        const nlohmann::json& first = *clientNamed(now, "preview-main");
        const nlohmann::json& second = *clientNamed(now, "batch");
        CHECK(first["class"] == "preview");
        CHECK(first["weight"] == 3);
        CHECK(second["class"] == "batch");
        MESSAGE("GPU held: preview ", shares[0], ", batch ", shares[1], " of the window");
        CHECK(shares[0] / shares[1] == doctest::Approx(3.0).epsilon(0.3));
    }
}

TEST_CASE("with a kernel budget the stats show each stage's tiles, and framecl trace writes them as Chrome JSON")
{
    std::string config = pipelines;
    config.replace(config.find("kernel_budget_ms = 1000"), 23, "kernel_budget_ms = 4");
    RunningDaemon daemon(config);
    auto heavy = camera(daemon, "heavy", "heavy", "640x360");
    Client observer = connectTo(daemon, "observer");
    waitForFrames(observer, "heavy", 2);

    const auto trace_file = daemon.dir().path() / "trace.json";
    const int window_s = traceSeconds(observer, "heavy");
    ChildProcess trace({requireEnv("FRAMECL_CLI"), "trace", "--socket", daemon.socket().string(), "--seconds",
                        std::to_string(window_s), "-o", trace_file.string()},
                       {}, daemon.dir().path());
    const auto status = trace.wait(std::chrono::seconds(window_s + 30));
    REQUIRE(status);
    CHECK_MESSAGE(status->code == 0, trace.stderrText());
    CHECK(contains(trace.stdoutText(), "trace.json"));

    const auto now = stats(observer);
    heavy->signal(SIGTERM);
    heavy->wait(10s);
    const auto& stage = (*clientNamed(now, "heavy"))["sessions"][0]["stages"][0];
    MESSAGE(stage.dump());
    CHECK(stage["tiles"].get<uint32_t>() > 1);
    CHECK(now["daemon"]["kernel_budget_ms"] == 4.0);

    std::ifstream file(trace_file);
    const auto json = nlohmann::json::parse(file);
    std::map<std::string, int> lanes;
    int slices = 0;
    for (const auto& event : json["traceEvents"]) {
        if (event["ph"] == "M" && event["name"] == "thread_name")
            ++lanes[event["args"]["name"].get<std::string>()];
        if (event["ph"] == "X") {
            ++slices;
            CHECK(event["dur"].get<double>() >= 0);
            CHECK(event["ts"].get<double>() >= 0);
        }
    }
    CHECK(slices > 1);
    bool heavy_lane = false;
    for (const auto& [lane, count] : lanes)
        heavy_lane = heavy_lane || contains(lane, "heavy");
    CHECK(heavy_lane);
}

namespace {

// Of the frames of every client together, in the order they started on the device, the
// part that found it idle: the frames before it had all ended on the device before it
// started, though it was waiting by then. What a feed that stopped between clients
// would show at every other client's frame.
double startedOnIdleDevice(std::vector<FrameTimes> frames)
{
    std::sort(frames.begin(), frames.end(),
              [](const FrameTimes& a, const FrameTimes& b) { return a.start_ns < b.start_ns; });
    uint64_t device_free_ns = 0; // when the frames started so far had all ended
    size_t idle = 0;
    for (const FrameTimes& frame : frames) {
        REQUIRE(frame.gpu_end_ns > 0); // PoCL profiles
        idle += device_free_ns && frame.queued_ns < device_free_ns && frame.start_ns > device_free_ns;
        device_free_ns = std::max(device_free_ns, frame.gpu_end_ns);
    }
    return double(idle) / double(frames.size());
}

// `count` clients flooding `light` at 640x360 at once for two seconds: their frames'
// times, every frame ok.
std::vector<FrameTimes> floodLight(const RunningDaemon& daemon, size_t count)
{
    std::vector<std::unique_ptr<FloodingClient>> clients;
    for (size_t k = 0; k < count; ++k)
        clients.push_back(
            std::make_unique<FloodingClient>(daemon, fmt::format("light-{}", k).c_str(), 640, 360, "light"));
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (auto& client : clients)
        threads.emplace_back([&client, &stop] { client->run(stop); });
    std::this_thread::sleep_for(2s);
    stop = true;
    for (std::thread& thread : threads)
        thread.join();
    std::vector<FrameTimes> frames;
    for (auto& client : clients) {
        CHECK(client->failures() == 0);
        CHECK(client->frames() > 20);
        frames.insert(frames.end(), client->times().begin(), client->times().end());
    }
    return frames;
}

} // namespace

TEST_CASE("clients flooding at once keep the device fed whoever's frame is next")
{
    // docs/benchmarks.md, "Many clients", on PoCL: short frames, where a frame that
    // waited for the host to hear of the end before it would leave the device idle
    // meanwhile. One client keeps its next frame queued behind its running one; four
    // clients' frames must follow one another as closely, whoever's is next.
    RunningDaemon daemon(pipelines);
    floodLight(daemon, 1); // opens the size's first session, untimed
    const double alone = startedOnIdleDevice(floodLight(daemon, 1));
    const double together = startedOnIdleDevice(floodLight(daemon, 4));
    MESSAGE("frames that found the device idle though they waited: one client ", alone, ", four clients ",
            together);
    // Under a feed that stops while another client waits, nearly every one of the four
    // clients' frames finds the device idle. A working feed's four clients, on a loaded
    // 2-core machine (CI: a compile beside it), can still find it idle more often than
    // one does, when the loop's thread waits for a CPU: the margin is for that, and
    // stays far below what a stopping feed shows.
    CHECK(together <= alone + 0.45);
}
