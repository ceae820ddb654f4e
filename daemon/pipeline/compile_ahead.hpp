#pragma once
// Kernels compiled in a helper process before the tuner launches them, on a driver that
// compiles a kernel for each new work-group size and global-offset class at its first
// launch while holding a lock every launch takes (PoCL's CPU driver:
// gpu::Capabilities::compiles_at_first_launch). Compiled in framecld's own process,
// each candidate of a tuning would hold every client's frames for the whole compile
// (docs/benchmarks.md, "A first photo beside a 30 fps stream"); compiled by a helper —
// framecld run again with --compile-ahead — they land in the driver's on-disk kernel
// cache, which both processes share, and framecld's first launch only loads them.
// The helper takes CPU time (PoCL's device is the CPU) but holds nothing of framecld's.
// The helper compiles the candidates in the order the tuner times them and says each
// as it is done; the tuner waits for a candidate's word before it times it, so it never
// launches a kernel the helper has not compiled, and stops the helper while it times
// (SIGSTOP): on PoCL the device is the CPU, which a helper at work would share with
// the candidate timed, skewing its time (docs/benchmarks.md, "A first photo beside a
// 30 fps stream", tried and dropped).
// Where the helper fails, is cancelled, or takes longer than the tuning's budget for
// one candidate, the candidates after compile at their first launch, as before: it
// only ever saves time.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include <sys/types.h>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "gpu/context.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

// In the helper: opens a one-stage session of stage `stage` of `pipeline` on frames of
// `input` for every candidate the tuner tries there (Tuner::candidates, in its order),
// cut for `kernel_budget_ns` as the tuner cuts them: calibrated, and its recording run
// once; calls `compiled` with the count done after each (one that fails, as a
// work-group size a kernel cannot take, counts as done, as the tuner skips it).
Result<void> compileCandidates(const gpu::GpuContext& gpu, const PipelineDefinition& pipeline, size_t stage,
                               const FrameShape& input, uint64_t kernel_budget_ns,
                               const std::function<void(size_t compiled)>& compiled);

// One helper at work for one stage; killed when dropped, if it still runs.
class CompileAheadRun {
public:
    CompileAheadRun(pid_t pid, UniqueFd progress, std::chrono::milliseconds limit)
        : pid_(pid), progress_(std::move(progress)), limit_(limit)
    {
    }
    CompileAheadRun(CompileAheadRun&& other) noexcept
        : pid_(std::exchange(other.pid_, -1)), progress_(std::move(other.progress_)), limit_(other.limit_),
          compiled_(other.compiled_), pending_(std::move(other.pending_))
    {
    }
    CompileAheadRun& operator=(CompileAheadRun&&) = delete;
    ~CompileAheadRun();

    // Waits until the helper has compiled the first `count` candidates: true. False
    // where it ended, failed or took longer than the limit for the next one first (it
    // is then killed), or `cancelled` was set; every later call is then false at once.
    bool waitFor(size_t count, const std::atomic<bool>* cancelled);
    // Stops the helper where it is (SIGSTOP) until resume() (SIGCONT).
    void pause();
    void resume();

private:
    void stop();

    pid_t pid_;
    UniqueFd progress_; // the helper's stdout: one line, the count compiled, per candidate
    std::chrono::milliseconds limit_;
    size_t compiled_ = 0;
    std::string pending_; // a line not yet whole
};

// In framecld: starts helpers.
class CompileAhead {
public:
    // `framecld`: the program to run; `config_file`: the configuration it loads (the
    // one framecld runs, for the same plugins, kernels and pipelines); `limit`: the
    // longest the tuner waits for one candidate (gpu.tuning_budget_ms).
    CompileAhead(std::filesystem::path framecld, std::filesystem::path config_file, std::chrono::milliseconds limit)
        : framecld_(std::move(framecld)), config_file_(std::move(config_file)), limit_(limit)
    {
    }

    // Runs `framecld --config CONFIG --compile-ahead PIPELINE --stage STAGE --frame
    // FOURCC WIDTH HEIGHT`; fails with why it could not.
    Result<CompileAheadRun> start(const std::string& pipeline, size_t stage, const FrameShape& input) const;

private:
    std::filesystem::path framecld_;
    std::filesystem::path config_file_;
    std::chrono::milliseconds limit_;
};

} // namespace framecl::pipeline
