// framecld under a long mixed load (docs/testing.md, "Soak"): eight clients at once, for
// $SOAK_SECONDS (40) after a warm-up — six mock cameras with different pipelines, formats, sizes and
// rates, one camera killed with SIGKILL every few seconds and started again, one client
// sending garbage — and a SIGHUP every 10 s. At the end every Submit of every camera
// got exactly one Done, nothing a client held is left behind, and the daemon's RSS and
// open file descriptors are where they were after the warm-up (eight reloads).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "child_process.hpp"
#include "daemon_client.hpp"
#include "daemon_fixture.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace std::chrono_literals;

namespace {

const std::string pipelines = R"(
[[pipeline]]
name = "luma"
stages = [ { plugin = "color", op = "abgr_to_y" } ]
[[pipeline]]
name = "edges"
stages = [ { plugin = "color", op = "nv12_to_y" }, { plugin = "sobel" } ]
[[pipeline]]
name = "smooth"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "box", width = 5, height = 5 } ]
)";

struct CameraSpec {
    std::string name, pipeline, format, size;
    int fps;
};

// The steady cameras: every pipeline, three formats, sizes from 64x48 to 1280x720.
const std::vector<CameraSpec> steady = {
    {"copy-abgr", "copy", "abgr8888", "640x480", 30},  {"luma-720p", "luma", "abgr8888", "1280x720", 10},
    {"edges-nv12", "edges", "nv12", "320x240", 60},    {"copy-nv12", "copy", "nv12", "640x360", 25},
    {"luma-tiny", "luma", "abgr8888", "64x48", 200},   {"smooth", "smooth", "abgr8888", "800x600", 8},
};

// Every camera is asked for more frames than the soak lasts: the steady ones are
// stopped with SIGINT at its end, the victim killed.
std::unique_ptr<ChildProcess> startCamera(const RunningDaemon& daemon, const CameraSpec& spec)
{
    const int frames = 1'000'000;
    std::vector<std::string> argv{requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(),
                                  "--name", spec.name, "--pipeline", spec.pipeline, "--format", spec.format,
                                  "--size", spec.size, "--fps", std::to_string(spec.fps), "--frames",
                                  std::to_string(frames), "--timeout", "30000", "--json"};
    if (spec.pipeline == "copy")
        argv.push_back("--verify");
    return std::make_unique<ChildProcess>(argv, std::map<std::string, std::string>{}, daemon.dir().path());
}

// The daemon's resident memory in KiB and its open file descriptors.
struct Footprint {
    long rss_kib = 0;
    long fds = 0;
};

Footprint footprintOf(pid_t pid)
{
    Footprint footprint;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            footprint.rss_kib = std::stol(line.substr(6));
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
        ++footprint.fds;
    return footprint;
}

long median(std::vector<long> values)
{
    REQUIRE_FALSE(values.empty());
    std::nth_element(values.begin(), values.begin() + long(values.size() / 2), values.end());
    return values[values.size() / 2];
}

// Waits until the client `name` has had a frame done (at most 60 s).
void waitForFrames(framecl_client* observer, const std::string& name)
{
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    for (;;) {
        const nlohmann::json now = stats(observer);
        for (const auto& client : now["clients"])
            if (client["name"] == name && !client["sessions"].empty() &&
                client["sessions"][0]["frames_done"].get<uint64_t>() > 0)
                return;
        REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, name << " has no frame done: " << now.dump());
        std::this_thread::sleep_for(100ms);
    }
}

// A client that says nothing framecld understands: random messages on the ZeroMQ
// socket, each answered with an error, until `stop`.
void sendGarbage(const RunningDaemon& daemon, const std::atomic<bool>& stop, int& answered, int& unanswered)
{
    zmq::context_t context;
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::rcvtimeo, 5000);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.connect("ipc://" + daemon.socket().string());
    std::mt19937 random(15);
    while (!stop) {
        std::vector<uint8_t> bytes(random() % 512);
        for (auto& byte : bytes)
            byte = uint8_t(random());
        dealer.send(zmq::buffer(bytes), zmq::send_flags::none);
        zmq::message_t reply;
        ++(dealer.recv(reply) ? answered : unanswered);
        std::this_thread::sleep_for(10ms);
    }
}

} // namespace

TEST_CASE("eight clients, one killed and restarted, one sending garbage, SIGHUP every 10 s: "
          "every Submit gets one Done and nothing leaks")
{
    const char* const configured = std::getenv("SOAK_SECONDS");
    // The load after the warm-up, which takes as long as it takes: two windows of 10 s
    // to compare and time between them.
    const int seconds = std::max(25, configured ? std::atoi(configured) : 40);
    RunningDaemon daemon(pipelines);
    Client observer = connectTo(daemon, "observer");

    const auto start = std::chrono::steady_clock::now();
    std::vector<std::unique_ptr<ChildProcess>> cameras;
    for (const CameraSpec& spec : steady)
        cameras.push_back(startCamera(daemon, spec));

    std::atomic<bool> stop{false};
    int garbage_answered = 0, garbage_unanswered = 0;
    std::thread garbage([&] { sendGarbage(daemon, stop, garbage_answered, garbage_unanswered); });

    // The victim floods `copy` and is killed every 3 s, then started again.
    const CameraSpec victim_spec{"victim", "copy", "abgr8888", "320x240", 0};
    auto victim = startCamera(daemon, victim_spec);
    // The warm-up: every steady camera streaming (on a loaded machine they take seconds
    // to open their sessions), then eight reloads in a row, as the daemon's RSS climbs
    // with its first reloads and then stays flat (119 MB to 197 MB over the first eight
    // SIGHUPs of an idle framecld here, the same over eight more: the allocator's and
    // PoCL's state for building programs again).
    for (const CameraSpec& spec : steady)
        waitForFrames(observer, spec.name);
    int kills = 0, reloads = 0;
    for (; reloads < 8; ++reloads)
        daemon.reload();
    const auto warmed_up = std::chrono::steady_clock::now();
    MESSAGE("the warm-up took ", std::chrono::duration<double>(warmed_up - start).count(), " s");
    const auto end = warmed_up + std::chrono::seconds(seconds);
    auto next_kill = start + 3s, next_reload = warmed_up + 10s, next_sample = warmed_up;
    std::vector<long> rss_after_warm_up, fds_after_warm_up, rss_at_end, fds_at_end;
    while (std::chrono::steady_clock::now() < end) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= next_kill) {
            victim->signal(SIGKILL);
            victim->wait(10s);
            victim = startCamera(daemon, victim_spec);
            ++kills;
            next_kill += 3s;
        }
        if (now >= next_reload) {
            daemon.reload();
            ++reloads;
            next_reload += 10s;
        }
        if (now >= next_sample) {
            const Footprint footprint = footprintOf(daemon.pid());
            const bool early = now < warmed_up + 10s, late = now >= end - 10s;
            if (early || late) {
                (early ? rss_after_warm_up : rss_at_end).push_back(footprint.rss_kib);
                (early ? fds_after_warm_up : fds_at_end).push_back(footprint.fds);
            }
            next_sample += 1s;
        }
        std::this_thread::sleep_for(50ms);
    }
    victim->signal(SIGKILL);
    victim->wait(10s);
    stop = true;
    garbage.join();

    // Every steady camera, still streaming, is told to stop; its report must account for
    // each Submit with one Done.
    for (const auto& camera : cameras)
        camera->signal(SIGINT);
    for (size_t i = 0; i < cameras.size(); ++i) {
        CAPTURE(steady[i].name);
        const auto status = cameras[i]->wait(60s);
        REQUIRE_MESSAGE(status, "still running");
        CHECK_MESSAGE((status->exited && status->code == 0), cameras[i]->stderrText());
        const auto report = nlohmann::json::parse(cameras[i]->stdoutText());
        MESSAGE(report.dump());
        const uint64_t dones = report["ok"].get<uint64_t>() + report["failed"].get<uint64_t>() +
                               report["lost"].get<uint64_t>() + report["busy"].get<uint64_t>() +
                               report["dropped"].get<uint64_t>();
        CHECK(report["stopped_early"] == true);
        CHECK(dones == report["frames"].get<uint64_t>());
        CHECK(report["ok"].get<uint64_t>() > 0);
        CHECK(report["failed"].get<uint64_t>() == 0);
        CHECK(report["lost"].get<uint64_t>() == 0);
        CHECK(report["out_of_order"].get<uint64_t>() == 0);
        if (report.contains("mismatches"))
            CHECK(report["mismatches"].get<uint64_t>() == 0);
    }
    MESSAGE(kills, " kills, ", reloads, " reloads, ", garbage_answered, " garbage messages answered");
    CHECK(kills >= int(std::chrono::duration<double>(end - start).count() / 3) - 1);
    CHECK(reloads > 8); // and one every 10 s after the warm-up
    CHECK(garbage_answered > 0);
    CHECK(garbage_unanswered == 0);

    // Nothing left behind: the observer is the only client, and holds nothing.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    nlohmann::json now = stats(observer);
    while (now["clients"].size() > 1 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        now = stats(observer);
    }
    INFO(now.dump());
    REQUIRE(now["clients"].size() == 1);
    CHECK(now["clients"][0]["buffers"] == 0);
    CHECK(now["clients"][0]["sessions"].empty());

    // The footprint under the same load, ten seconds after the warm-up and in the last
    // ten seconds: medians, so that the victim's restarts do not decide it.
    const long rss_before = median(rss_after_warm_up), rss_after = median(rss_at_end);
    const long fds_before = median(fds_after_warm_up), fds_after = median(fds_at_end);
    MESSAGE("RSS ", rss_before, " -> ", rss_after, " KiB; fds ", fds_before, " -> ", fds_after);
    CHECK(double(rss_after) <= 1.05 * double(rss_before));
    CHECK(double(rss_after) >= 0.95 * double(rss_before));
    CHECK(double(fds_after) <= 1.05 * double(fds_before));
    CHECK(double(fds_after) >= 0.95 * double(fds_before));
}
