#pragma once
// A real framecld for integration tests: its own config, sockets and cache in a
// temporary directory, started and stopped as a service manager would, with its
// readiness read from a notify socket the test owns. Its program cache starts with the
// programs this test process's daemons compiled before it (shared_programs.hpp), unless
// `extra_env` gives it a PoCL cache of its own: such a test is of what a first start
// compiles, so both its caches start empty.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "notify_socket.hpp"
#include "temp_dir.hpp"

namespace framecl::test {

// A pipeline of one stage, ABGR8888 to its luma (R8), for tests that need any pipeline
// beside the built-in copy.
inline const std::string luma_pipeline = "[[pipeline]]\nname = \"luma\"\n"
                                         "stages = [ { plugin = \"color\", op = \"abgr_to_y\" } ]\n";

class RunningDaemon {
public:
    // Writes the config — [daemon] with the paths inside the temp dir and
    // `daemon_keys`, then `extra_toml` — and starts the daemon; returns once it said
    // READY=1.
    // `extra_env` is added to the daemon's environment (WATCHDOG_USEC, say).
    // `ready_timeout` bounds each wait for READY=1 (building its programs, at start and
    // reload).
    // `launcher`, when given, is a command that starts framecld's command line appended
    // to it in the same process (as `unshare` does).
    explicit RunningDaemon(const std::string& extra_toml = "", const std::string& daemon_keys = "",
                           std::map<std::string, std::string> extra_env = {},
                           std::chrono::seconds ready_timeout = std::chrono::seconds(60),
                           std::vector<std::string> launcher = {});
    ~RunningDaemon();

    const std::filesystem::path& socket() const { return socket_; }
    std::filesystem::path bufferSocket() const { return dir_ / "buffers.sock"; }
    std::filesystem::path configFile() const { return config_; }
    const TempDir& dir() const { return dir_; }
    pid_t pid() const { return process_ ? process_->pid() : -1; }

    // SIGKILL (a crash) or SIGTERM (a clean stop), then wait for the exit; after
    // SIGTERM the test fails unless the daemon exited with status 0 (the destructor
    // stops it so).
    void stop(int signo = SIGTERM);
    // Starts it again on the same config and sockets; returns once READY=1.
    void start();
    // Waits for the daemon to exit by itself; nothing if it still runs after `timeout`.
    // Once it has, stop() and the destructor have nothing to stop.
    std::optional<ExitStatus> waitForExit(std::chrono::milliseconds timeout);

    // Rewrites the config as the constructor did; the daemon reads it at reload().
    void reconfigure(const std::string& extra_toml, const std::string& daemon_keys = "");
    // SIGHUP; returns once the daemon said READY=1 again.
    void reload();

    std::string log() const { return process_ ? process_->stderrText() : ""; }
    // The socket standing in for systemd's: what the daemon notified since READY=1.
    NotifySocket& notify() { return *notify_; }

private:
    // Starts with sharedProgramsDir()'s entries and adds its own at stop(): unless the
    // test gave it a PoCL cache of its own.
    bool sharesPrograms() const { return !env_.contains("POCL_CACHE_DIR"); }

    TempDir dir_;
    std::filesystem::path config_;
    std::filesystem::path socket_;
    std::map<std::string, std::string> env_;
    std::chrono::seconds ready_timeout_;
    std::vector<std::string> launcher_;
    std::optional<ExitStatus> exited_; // seen by waitForExit
    std::unique_ptr<NotifySocket> notify_;
    std::unique_ptr<ChildProcess> process_;
};

} // namespace framecl::test
