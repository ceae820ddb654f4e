// framecld as a service manager and a user see it: a real daemon process, its exit
// codes, its output, and the notify messages it sends to a socket the test owns.
#include <csignal>
#include <cstdlib>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "daemon_fixture.hpp"
#include "notify_socket.hpp"
#include "temp_dir.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace std::chrono_literals;

namespace {

std::string daemonPath() { return requireEnv("FRAMECL_DAEMON"); }
std::string sourceRoot() { return requireEnv("FRAMECL_SOURCE_ROOT"); }

// A config that keeps everything the daemon writes inside `dir`.
std::string testConfig(const TempDir& dir, const std::string& pipelines)
{
    return "[daemon]\n"
           "kernel_dirs = [\"" + sourceRoot() + "/kernels\"]\n"
           "cache_dir = \"" + (dir / "cache").string() + "\"\n"
           "socket = \"" + (dir / "framecl.sock").string() + "\"\n"
           "buffer_socket = \"" + (dir / "buffers.sock").string() + "\"\n"
           "pipeline_dirs = []\n"
           "[gpu]\n"
           "device = \"auto\"\n" + pipelines;
}

} // namespace

TEST_CASE("--version prints the version")
{
    TempDir dir;
    auto run = runToCompletion({daemonPath(), "--version"}, dir.path());
    CHECK(run.status.exited);
    CHECK(run.status.code == 0);
    CHECK(run.out.rfind("framecld ", 0) == 0);
}

TEST_CASE("--check-config accepts the shipped default config")
{
    TempDir dir;
    auto run = runToCompletion({daemonPath(), "--check-config", sourceRoot() + "/config/framecld.toml"}, dir.path());
    CHECK_MESSAGE(run.status.code == 0, run.err);
    CHECK(run.out.find("OK") != std::string::npos);
}

TEST_CASE("--check-config refuses a misspelt key and names its line")
{
    TempDir dir;
    const auto file = dir.write("bad.toml", "[gpu]\ndevice = \"auto\"\nkernel_budget = 4.0\n");
    auto run = runToCompletion({daemonPath(), "--check-config", file.string()}, dir.path());
    CHECK(run.status.exited);
    CHECK(run.status.code != 0);
    CHECK(run.err.find("bad.toml:3:") != std::string::npos);
    CHECK(run.err.find("kernel_budget") != std::string::npos);
    CHECK(run.err.find("kernel_budget_ms") != std::string::npos); // the suggestion
}

TEST_CASE("--list-devices --json is JSON that lists PoCL with its extensions")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir, ""));
    auto run = runToCompletion({daemonPath(), "--config", config.string(), "--list-devices", "--json"}, dir.path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    const auto json = nlohmann::json::parse(run.out); // throws, and fails the test, if not JSON
    const auto& devices = json.is_array() ? json : json.at("devices");
    REQUIRE(devices.is_array());
    bool found_pocl = false;
    for (const auto& device : devices) {
        const std::string text = device.dump();
        if (text.find("Portable Computing Language") == std::string::npos && text.find("pthread") == std::string::npos)
            continue;
        found_pocl = true;
        CHECK(text.find("cl_khr_command_buffer") != std::string::npos);
    }
    CHECK(found_pocl);
}

TEST_CASE("the daemon notifies ready, pets the watchdog, reloads on SIGHUP and stops on SIGTERM")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir, ""));
    NotifySocket notify(dir / "notify.sock");
    ChildProcess daemon({daemonPath(), "--config", config.string()},
                        {{"NOTIFY_SOCKET", notify.path().string()}, {"WATCHDOG_USEC", "400000"}}, dir.path());

    auto ready = notify.waitFor("READY=1", 60s);
    REQUIRE_MESSAGE(ready, daemon.stderrText());
    CHECK(ready->find("STATUS=1 pipelines on ") != std::string::npos);
    CHECK(notify.waitFor("WATCHDOG=1", 2s));

    // A valid new config: reloaded, and the status counts the added pipeline.
    dir.write("framecld.toml", testConfig(dir, luma_pipeline));
    daemon.signal(SIGHUP);
    CHECK(notify.waitFor("RELOADING=1", 10s));
    auto reloaded = notify.waitFor("READY=1", 30s);
    REQUIRE(reloaded);
    CHECK(reloaded->find("STATUS=2 pipelines on ") != std::string::npos);

    daemon.signal(SIGTERM);
    CHECK(notify.waitFor("STOPPING=1", 10s));
    auto status = daemon.wait(10s);
    REQUIRE(status);
    CHECK(status->exited);
    CHECK(status->code == 0);
}

TEST_CASE("an invalid config at SIGHUP is logged and the running one kept")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir, luma_pipeline));
    NotifySocket notify(dir / "notify.sock");
    ChildProcess daemon({daemonPath(), "--config", config.string()}, {{"NOTIFY_SOCKET", notify.path().string()}},
                        dir.path());
    REQUIRE_MESSAGE(notify.waitFor("READY=1", 60s), daemon.stderrText());

    dir.write("framecld.toml", "[gpu]\nperf_hint = \"turbo\"\n");
    daemon.signal(SIGHUP);
    auto after = notify.waitFor("READY=1", 30s);
    REQUIRE(after);
    CHECK(after->find("2 pipelines") != std::string::npos);
    CHECK(after->find("reload failed, old config kept") != std::string::npos);

    daemon.signal(SIGINT);
    auto status = daemon.wait(10s);
    REQUIRE(status);
    CHECK(status->code == 0);
    const std::string log = daemon.stderrText();
    CHECK(log.find("framecld.toml:2:") != std::string::npos);
    CHECK(log.find("perf_hint") != std::string::npos);
}

TEST_CASE("a config the daemon cannot load stops it at start with the reason")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", "[limits]\nmax_clients = 0\n");
    auto run = runToCompletion({daemonPath(), "--config", config.string()}, dir.path());
    CHECK(run.status.code != 0);
    CHECK(run.err.find("framecld.toml:2:") != std::string::npos);
    CHECK(run.err.find("max_clients") != std::string::npos);
}
