#include "pipeline/compile_ahead.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pipeline/stage_timing.hpp"
#include "pipeline/tuner.hpp"

extern char** environ;

namespace framecl::pipeline {

Result<void> compileCandidates(const gpu::GpuContext& gpu, const PipelineDefinition& pipeline, size_t stage,
                               const FrameShape& input, uint64_t kernel_budget_ns,
                               const std::function<void(size_t compiled)>& compiled)
{
    if (stage >= pipeline.stages.size())
        return fail(fmt::format("pipeline '{}' has {} stages, not {}", pipeline.name, pipeline.stages.size(), stage + 1));
    auto timer = StageTimer::open(gpu, singleStage(pipeline, stage), input, kernel_budget_ns);
    if (!timer)
        return tl::unexpected(timer.error());
    size_t done = 0;
    for (const StageChoice& candidate :
         Tuner::candidates(pipeline.stages[stage], input, gpu.capabilities().max_work_group_size)) {
        (void)timer->time({candidate}, 0, 0); // one that fails is skipped, as the tuner skips it
        compiled(++done);
    }
    return {};
}

CompileAheadRun::~CompileAheadRun()
{
    stop();
}

void CompileAheadRun::stop()
{
    if (pid_ < 0)
        return;
    kill(pid_, SIGKILL); // done or not: nothing it does now is waited for
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

void CompileAheadRun::pause()
{
    if (pid_ >= 0)
        kill(pid_, SIGSTOP);
}

void CompileAheadRun::resume()
{
    if (pid_ >= 0)
        kill(pid_, SIGCONT);
}

bool CompileAheadRun::waitFor(size_t count, const std::atomic<bool>* cancelled)
{
    // Polled a short while at a time: the cancellation and the limit, whichever first.
    auto deadline = std::chrono::steady_clock::now() + limit_;
    while (compiled_ < count) {
        if (pid_ < 0 || isCancelled(cancelled) || std::chrono::steady_clock::now() >= deadline) {
            stop();
            return false;
        }
        pollfd readable{progress_.get(), POLLIN, 0};
        if (poll(&readable, 1, 10) <= 0)
            continue;
        char bytes[64];
        const ssize_t got = read(progress_.get(), bytes, sizeof bytes);
        if (got <= 0) { // it ended (or failed) without saying more
            if (got < 0 && errno == EINTR)
                continue;
            stop();
            return false;
        }
        pending_.append(bytes, size_t(got));
        for (size_t end; (end = pending_.find('\n')) != std::string::npos; pending_.erase(0, end + 1)) {
            compiled_ = std::strtoull(pending_.c_str(), nullptr, 10);
            deadline = std::chrono::steady_clock::now() + limit_; // the next candidate's time
        }
    }
    return true;
}

Result<CompileAheadRun> CompileAhead::start(const std::string& pipeline, size_t stage, const FrameShape& input) const
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return fail(fmt::format("pipe2: {}", std::strerror(errno)));
    UniqueFd progress(pipe_fds[0]), helper_end(pipe_fds[1]);

    std::vector<std::string> args = {framecld_.string(), "--config", config_file_.string(), "--log-level", "off",
                                     "--compile-ahead", pipeline, "--stage", std::to_string(stage + 1), "--frame",
                                     std::to_string(input.fourcc), std::to_string(input.width),
                                     std::to_string(input.height)};
    std::vector<char*> argv;
    for (std::string& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);

    // framecld blocks the signals its loop reads (service_loop.hpp): the helper starts
    // with none blocked. It runs at SCHED_IDLE: on PoCL the device is the CPU, and the
    // helper takes it only while framecld leaves it idle, so it does not slow the
    // clients' frames. It speaks only on its stdout, the pipe.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    const sched_param idle{};
    posix_spawnattr_setschedpolicy(&attributes, SCHED_IDLE);
    posix_spawnattr_setschedparam(&attributes, &idle);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSCHEDULER);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&files, helper_end.get(), STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&files, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &files, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0)
        return fail(fmt::format("cannot run {}: {}", argv[0], std::strerror(spawned)));
    return CompileAheadRun(pid, std::move(progress), limit_);
}

} // namespace framecl::pipeline
