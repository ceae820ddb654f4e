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
// It runs for at most the tuning's budget: in that time it compiles more candidates
// than the tuner times in its own (each of the tuner's takes several frames), so what
// the tuner reaches is compiled. What it did not reach, or all of it where it fails or
// is cancelled, compiles at its first launch as before: it only ever saves time.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "base/result.hpp"
#include "gpu/context.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

// In the helper: opens a one-stage session of stage `stage` of `pipeline` on frames of
// `input` for every candidate the tuner tries there (Tuner::candidates), cut for
// `kernel_budget_ns` as the tuner cuts them: calibrated, and its recording run once.
// Returns how many candidates ran (one that fails, as a work-group size a kernel cannot
// take, is skipped as the tuner skips it).
Result<size_t> compileCandidates(const gpu::GpuContext& gpu, const PipelineDefinition& pipeline, size_t stage,
                                 const FrameShape& input, uint64_t kernel_budget_ns);

// In framecld: runs the helper and waits for it.
class CompileAhead {
public:
    // `framecld`: the program to run; `config_file`: the configuration it loads (the
    // one framecld runs, for the same plugins, kernels and pipelines); `limit`: how long
    // one run may take before it is killed.
    CompileAhead(std::filesystem::path framecld, std::filesystem::path config_file, std::chrono::milliseconds limit)
        : framecld_(std::move(framecld)), config_file_(std::move(config_file)), limit_(limit)
    {
    }

    // `framecld --config CONFIG --compile-ahead PIPELINE --stage STAGE --frame FOURCC
    // WIDTH HEIGHT`, killed when `cancelled` is set or after the limit. True where it
    // compiled every candidate, false where the limit stopped it first; fails with why
    // it did not run to either.
    Result<bool> run(const std::string& pipeline, size_t stage, const FrameShape& input,
                     const std::atomic<bool>* cancelled) const;

private:
    std::filesystem::path framecld_;
    std::filesystem::path config_file_;
    std::chrono::milliseconds limit_;
};

} // namespace framecl::pipeline
