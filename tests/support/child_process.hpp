#pragma once
// Runs a program the way a service manager or a shell would: fork + exec, extra
// environment variables, stdout and stderr captured to files the test can read.

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace framecl::test {

struct ExitStatus {
    bool exited = false; // false: killed by a signal
    int code = -1;       // exit code, or the signal number
};

class ChildProcess {
public:
    ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                 const std::filesystem::path& output_dir);
    ~ChildProcess(); // kills the child if it still runs

    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    void signal(int signo) const;

    // Waits for the child to end; nothing if it still runs after `timeout`.
    std::optional<ExitStatus> wait(std::chrono::milliseconds timeout);

    std::string stdoutText() const;
    std::string stderrText() const;

private:
    pid_t pid_ = -1;
    std::filesystem::path stdout_file_;
    std::filesystem::path stderr_file_;
};

// Runs a program to completion (at most `timeout`) and returns its status and output.
struct RunResult {
    ExitStatus status;
    std::string out;
    std::string err;
};
RunResult runToCompletion(const std::vector<std::string>& argv, const std::filesystem::path& output_dir,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120),
                          const std::map<std::string, std::string>& extra_env = {});

} // namespace framecl::test
