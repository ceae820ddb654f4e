#include "child_process.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace framecl::test {
namespace {

std::string readFile(const std::filesystem::path& file)
{
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

ExitStatus decode(int status)
{
    if (WIFEXITED(status))
        return {true, WEXITSTATUS(status)};
    return {false, WTERMSIG(status)};
}

} // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                           const std::filesystem::path& output_dir)
{
    static std::atomic<int> counter{0};
    const std::string tag = std::to_string(counter++);
    stdout_file_ = output_dir / ("child-" + tag + ".out");
    stderr_file_ = output_dir / ("child-" + tag + ".err");

    pid_ = fork();
    if (pid_ < 0)
        throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        const int out = open(stdout_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(stderr_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        // The test blocks no signals, but a runner might: start the child clean.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (const auto& [name, value] : extra_env)
            setenv(name.c_str(), value.c_str(), 1);
        std::vector<char*> args;
        for (const auto& arg : argv)
            args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
}

ChildProcess::~ChildProcess()
{
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
}

void ChildProcess::signal(int signo) const
{
    if (pid_ > 0)
        kill(pid_, signo);
}

std::optional<ExitStatus> ChildProcess::wait(std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        int status = 0;
        const pid_t done = waitpid(pid_, &status, WNOHANG);
        if (done == pid_) {
            pid_ = -1;
            return decode(status);
        }
        if (std::chrono::steady_clock::now() >= deadline)
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

std::string ChildProcess::stdoutText() const
{
    return readFile(stdout_file_);
}

std::string ChildProcess::stderrText() const
{
    return readFile(stderr_file_);
}

RunResult runToCompletion(const std::vector<std::string>& argv, const std::filesystem::path& output_dir,
                          std::chrono::milliseconds timeout, const std::map<std::string, std::string>& extra_env)
{
    ChildProcess child(argv, extra_env, output_dir);
    auto status = child.wait(timeout);
    if (!status)
        throw std::runtime_error(argv[0] + " did not finish in time");
    return {*status, child.stdoutText(), child.stderrText()};
}

} // namespace framecl::test
