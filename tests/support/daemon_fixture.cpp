#include "daemon_fixture.hpp"

#include <doctest/doctest.h>

#include "shared_programs.hpp"
#include "test_env.hpp"

using namespace std::chrono_literals;

namespace framecl::test {

RunningDaemon::RunningDaemon(const std::string& extra_toml, const std::string& daemon_keys,
                             std::map<std::string, std::string> extra_env, std::chrono::seconds ready_timeout,
                             std::vector<std::string> launcher)
    : socket_(dir_ / "framecl.sock"), env_(std::move(extra_env)), ready_timeout_(ready_timeout),
      launcher_(std::move(launcher))
{
    reconfigure(extra_toml, daemon_keys);
    if (sharesPrograms())
        copyProgramEntries(sharedProgramsDir(), dir_ / "cache");
    notify_ = std::make_unique<NotifySocket>(dir_ / "notify.sock");
    start();
}

void RunningDaemon::reconfigure(const std::string& extra_toml, const std::string& daemon_keys)
{
    // kernel_dirs may come in `daemon_keys`; TOML refuses a key set twice.
    const bool own_kernel_dirs = daemon_keys.find("kernel_dirs") != std::string::npos;
    const std::string base = "[daemon]\n"
                             "socket = \"" + socket_.string() + "\"\n"
                             "buffer_socket = \"" + bufferSocket().string() + "\"\n" +
                             (own_kernel_dirs ? "" : "kernel_dirs = [\"" + (requireSourceRoot() / "kernels").string() + "\"]\n") +
                             "cache_dir = \"" + (dir_ / "cache").string() + "\"\n"
                             "pipeline_dirs = []\n" + daemon_keys + "\n";
    config_ = dir_.write("framecld.toml", base + extra_toml);
}

void RunningDaemon::reload()
{
    process_->signal(SIGHUP);
    const auto ready = notify_->waitFor("READY=1", ready_timeout_);
    REQUIRE_MESSAGE(ready, "framecld did not reload:\n" << process_->stderrText());
}

// A clean stop, not a kill: a sanitized daemon checks for leaks as it exits, and its
// exit status carries any report to this test's verdict.
RunningDaemon::~RunningDaemon()
{
    if (process_)
        stop(SIGTERM);
}

void RunningDaemon::start()
{
    std::vector<std::string> command = launcher_;
    for (const std::string& argument : {requireEnv("FRAMECL_DAEMON"), std::string("--config"), config_.string()})
        command.push_back(argument);
    exited_.reset();
    process_ = std::make_unique<ChildProcess>(
        command,
        [&] {
            auto env = env_;
            env["NOTIFY_SOCKET"] = notify_->path().string();
            return env;
        }(),
        dir_.path());
    const auto ready = notify_->waitFor("READY=1", ready_timeout_);
    REQUIRE_MESSAGE(ready, "framecld did not become ready:\n" << process_->stderrText());
}

std::optional<ExitStatus> RunningDaemon::waitForExit(std::chrono::milliseconds timeout)
{
    if (!exited_)
        exited_ = process_->wait(timeout);
    return exited_;
}

// CHECK, not REQUIRE: this runs in the destructor too, where a throw would abort the
// suite. A daemon that outlives the wait is killed with its ChildProcess.
void RunningDaemon::stop(int signo)
{
    if (!exited_) {
        process_->signal(signo);
        const auto status = process_->wait(30s);
        CHECK_MESSAGE(status, "framecld did not stop after signal " << signo << ":\n" << process_->stderrText());
        if (status && signo == SIGTERM)
            // doctest prints a const char* after the first as a pointer: a std::string.
            CHECK_MESSAGE((status->exited && status->code == 0),
                          "framecld did not exit cleanly on SIGTERM ("
                              << std::string(status->exited ? "exit code " : "signal ") << status->code << "):\n"
                              << process_->stderrText());
    }
    process_.reset();
    if (sharesPrograms())
        copyProgramEntries(dir_ / "cache", sharedProgramsDir());
}

} // namespace framecl::test
