#include "pipeline/compile_ahead.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pipeline/stage_timing.hpp"
#include "pipeline/tuner.hpp"

extern char** environ;

namespace framecl::pipeline {

Result<size_t> compileCandidates(const gpu::GpuContext& gpu, const PipelineDefinition& pipeline, size_t stage,
                                 const FrameShape& input, uint64_t kernel_budget_ns)
{
    if (stage >= pipeline.stages.size())
        return fail(fmt::format("pipeline '{}' has {} stages, not {}", pipeline.name, pipeline.stages.size(), stage + 1));
    auto timer = StageTimer::open(gpu, singleStage(pipeline, stage), input, kernel_budget_ns);
    if (!timer)
        return tl::unexpected(timer.error());
    size_t ran = 0;
    for (const StageChoice& candidate :
         Tuner::candidates(pipeline.stages[stage], input, gpu.capabilities().max_work_group_size))
        ran += timer->time(candidate, 0, 0).has_value();
    return ran;
}

Result<bool> CompileAhead::run(const std::string& pipeline, size_t stage, const FrameShape& input,
                               const std::atomic<bool>* cancelled) const
{
    std::vector<std::string> args = {framecld_.string(), "--config", config_file_.string(), "--log-level", "off",
                                     "--compile-ahead", pipeline, "--stage", std::to_string(stage + 1), "--frame",
                                     std::to_string(input.fourcc), std::to_string(input.width),
                                     std::to_string(input.height)};
    std::vector<char*> argv;
    for (std::string& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);

    // framecld blocks the signals its loop reads (service_loop.hpp): the helper starts
    // with none blocked. Its output is of no use to anyone: it says how it went by its
    // exit status.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&files, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &files, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0)
        return fail(fmt::format("cannot run {}: {}", argv[0], std::strerror(spawned)));

    // Polled: the helper's end, the cancellation and the limit, whichever comes first.
    const auto deadline = std::chrono::steady_clock::now() + limit_;
    for (;;) {
        int status = 0;
        const pid_t ended = waitpid(pid, &status, WNOHANG);
        if (ended == pid) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return true;
            return fail(WIFEXITED(status) ? fmt::format("it exited with {}", WEXITSTATUS(status))
                                          : fmt::format("it was killed by signal {}", WTERMSIG(status)));
        }
        if (ended < 0 && errno != EINTR)
            return fail(fmt::format("waitpid: {}", std::strerror(errno)));
        const bool stop = isCancelled(cancelled);
        if (stop || std::chrono::steady_clock::now() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (stop)
                return fail(cancelled_text);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

} // namespace framecl::pipeline
