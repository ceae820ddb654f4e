// framecld as a service manager and a user see it: a real daemon process, its exit
// codes, its output, and the notify messages it sends to a socket the test owns.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "daemon_client.hpp"
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

namespace {

// systemd-socket-activate (systemd's package) listening on `path`: a stream socket, or
// with `seqpacket` a SOCK_SEQPACKET one. It starts what follows it once a client
// connects, passing the socket on in $LISTEN_FDS (one nested in another passes both),
// and of its own environment only what -E names: here, of the test's environment, what
// the daemon runs with anywhere else in the suite (PoCL's cache, the library path, and
// under scripts/test-sanitizers the sanitizers' options, whose leak suppressions a
// daemon without them does not read).
std::vector<std::string> socketActivate(const std::filesystem::path& path, bool seqpacket,
                                        const std::filesystem::path& notify_socket = {})
{
    std::vector<std::string> command{requireEnv("FRAMECL_SOCKET_ACTIVATE")};
    if (seqpacket)
        command.push_back("--seqpacket");
    for (const char* name : {"POCL_CACHE_DIR", "LD_LIBRARY_PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"})
        if (std::getenv(name) != nullptr)
            command.insert(command.end(), {"-E", name}); // -E NAME passes on its own value
    if (!notify_socket.empty())
        command.insert(command.end(), {"-E", "NOTIFY_SOCKET=" + notify_socket.string()});
    command.insert(command.end(), {"-l", path.string(), "--"});
    return command;
}

bool waitForFile(const std::filesystem::path& path, std::chrono::milliseconds timeout)
{
    for (const auto until = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < until;
         std::this_thread::sleep_for(10ms))
        if (std::filesystem::exists(path))
            return true;
    return false;
}

} // namespace

TEST_CASE("socket activation: a client that connects before framecld runs is served once it is up, and the "
          "sockets outlive the daemon")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir, ""));
    NotifySocket notify(dir / "notify.sock");
    // As framecld.socket does: both sockets made and listening before the daemon starts,
    // the daemon started at the first connection.
    std::vector<std::string> command = socketActivate(dir / "framecl.sock", false, notify.path());
    for (const auto& argument : socketActivate(dir / "buffers.sock", true, notify.path()))
        command.push_back(argument);
    for (const std::string& argument : {daemonPath(), std::string("--config"), config.string()})
        command.push_back(argument);
    ChildProcess daemon(command, {}, dir.path());
    REQUIRE_MESSAGE(waitForFile(dir / "framecl.sock", 10s), daemon.stderrText());
    CHECK_FALSE(notify.waitFor("READY=1", 500ms)); // nothing runs framecld yet

    // The client's first connection starts it; the connection waits in the socket's
    // backlog while framecld builds its kernels, and is answered then.
    const std::string socket = (dir / "framecl.sock").string();
    framecl_connect_options options{socket.c_str(), "early", 120000};
    Client client;
    REQUIRE_MESSAGE(framecl_connect(&options, &client.handle) == 0,
                    std::string(framecl_last_error(nullptr)) << "\n" << daemon.stderrText());
    CHECK(notify.waitFor("READY=1", 10s));

    // A frame through the built-in copy, both buffers passed on the activated buffer socket.
    constexpr uint32_t width = 64, height = 48;
    uint64_t size = 0;
    const framecl_frame_layout layout = packed(DRM_FORMAT_ABGR8888, width, height, &size);
    framecl_frame_layout out_layout{};
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "copy", DRM_FORMAT_ABGR8888, width, height, nullptr, 0, &session,
                                 &out_layout) == 0);
    framecl::UniqueFd in_fd, out_fd;
    const uint32_t in_id = registerMemfd(client, layout, size, in_fd);
    const uint32_t out_id = registerMemfd(client, out_layout, size, out_fd);
    std::vector<uint8_t> sent(size);
    std::mt19937 random(3);
    for (auto& byte : sent)
        byte = uint8_t(random());
    REQUIRE(pwrite(in_fd.get(), sent.data(), size, 0) == ssize_t(size));
    REQUIRE(framecl_submit(client, session, in_id, out_id, 1) == 0);
    const framecl_done done = nextDone(client);
    CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    CHECK(readMemfd(out_fd.get(), size) == sent);

    // The socket files are the service manager's: framecld leaves them when it stops.
    daemon.signal(SIGTERM);
    const auto status = daemon.wait(30s);
    REQUIRE(status);
    CHECK_MESSAGE((status->exited && status->code == 0), daemon.stderrText());
    CHECK(std::filesystem::is_socket(dir / "framecl.sock"));
    CHECK(std::filesystem::is_socket(dir / "buffers.sock"));
}

TEST_CASE("socket activation: a passed socket that is not one of framecld's stops it at start, named")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir, ""));
    std::vector<std::string> command = socketActivate(dir / "other.sock", false);
    for (const std::string& argument : {daemonPath(), std::string("--config"), config.string()})
        command.push_back(argument);
    ChildProcess daemon(command, {}, dir.path());
    REQUIRE(waitForFile(dir / "other.sock", 10s));

    // A connection makes systemd-socket-activate start framecld with the socket.
    framecl::UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, (dir / "other.sock").c_str(), sizeof address.sun_path - 1);
    REQUIRE(connect(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);

    const auto status = daemon.wait(30s);
    REQUIRE(status);
    CHECK(status->code == 1);
    const std::string log = daemon.stderrText();
    CHECK_MESSAGE(contains(log, "fd 3 is a listening stream socket on " + (dir / "other.sock").string() +
                                    ", not one of its own"),
                  log);
    CHECK_FALSE(std::filesystem::exists(dir / "framecl.sock")); // it stopped before making its own
}

TEST_CASE("with stderr the journal, entries go to the journal with the client, session and pipeline as fields" *
          doctest::skip(geteuid() != 0))
{
    // sd_journal_sendv() writes to /run/systemd/journal/socket, a path no environment
    // variable moves: framecld runs in a mount namespace of its own (unshare(1), which
    // needs root) with a directory of the test's bound there, where the test's own
    // datagram socket stands in for journald's. $JOURNAL_STREAM names the file its
    // stderr goes to, as systemd names the stream it connects.
    TempDir journal_dir;
    NotifySocket journal(journal_dir / "socket");
    const std::vector<std::string> launcher{
        "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
        "mkdir -p /run/systemd/journal && mount --bind '" + journal_dir.path().string() +
            "' /run/systemd/journal && JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) && "
            "export JOURNAL_STREAM && exec \"$@\"",
        "sh"};
    RunningDaemon daemon(luma_pipeline, "", {}, 60s, launcher);

    // Each entry is one datagram of FIELD=value lines (the journal's native protocol).
    const auto listening = journal.waitFor("MESSAGE=listening on ", 10s);
    REQUIRE_MESSAGE(listening, daemon.log());
    CHECK_FALSE(contains(*listening, "FRAMECL_CLIENT="));

    Client client = connectTo(daemon, "journal-test");
    const auto connected = journal.waitFor("MESSAGE=client 'journal-test' connected", 10s);
    REQUIRE_MESSAGE(connected, daemon.log());
    CHECK_MESSAGE(contains(*connected, "\nFRAMECL_CLIENT=journal-test\n"), *connected);
    CHECK_FALSE(contains(*connected, "FRAMECL_SESSION="));

    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session(client, "luma", DRM_FORMAT_ABGR8888, 64, 48, nullptr, 0, &session, nullptr) == 0,
                    std::string(framecl_last_error(client)));
    const auto opened = journal.waitFor("FRAMECL_SESSION=", 10s);
    REQUIRE_MESSAGE(opened, daemon.log());
    CHECK_MESSAGE(contains(*opened, "MESSAGE=client 'journal-test': session " + std::to_string(session) + " of 'luma'"),
                  *opened);
    CHECK_MESSAGE(contains(*opened, "\nFRAMECL_CLIENT=journal-test\n"), *opened);
    CHECK_MESSAGE(contains(*opened, "\nFRAMECL_SESSION=" + std::to_string(session) + "\n"), *opened);
    CHECK_MESSAGE(contains(*opened, "\nFRAMECL_PIPELINE=luma\n"), *opened);
    CHECK_MESSAGE(contains(*opened, "\nFRAMECL_COMPONENT=ipc\n"), *opened);
    CHECK_MESSAGE(contains(*opened, "\nPRIORITY=6\n"), *opened); // info
    CHECK_MESSAGE(contains(*opened, "\nSYSLOG_IDENTIFIER=framecld\n"), *opened);

    // Nothing of it on stderr, which the journal would have recorded twice.
    CHECK_MESSAGE(!contains(daemon.log(), "journal-test"), daemon.log());
}
