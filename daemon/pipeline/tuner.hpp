#pragma once
// The per-device choice of each stage's variant and work-group size. Which is fastest
// depends on the kernel, the frame size and the GPU (guide §6.1.5: "the optimal
// work-group size ... is found by trying"), so the tuner tries: on the first session
// of a stage, frame size and device, it times every variant the stage leaves to
// `auto`, each with the driver's work-group size and a few fixed shapes, and keeps
// the fastest. Choices are kept in `<cache_dir>/tuning.json`, keyed by device, driver,
// plugin version, the stage's parameters and the frame size, so later sessions and
// later starts of framecld reuse them. With gpu.tuning = off there is no tuner and
// stages run as configured, with the plugins' defaults.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "gpu/context.hpp"
#include "pipeline/compile_ahead.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

struct TunedStage {
    StageChoice choice;
    uint64_t gpu_ns = 0; // median GPU time of one frame of the stage with `choice`
    uint64_t last_used = 0; // the tuner's use count when a session last took it
    // `choice` reads its input as an image, which the daemon copied in when timed alone
    // (include/framecl/plugin.h): gpu_ns includes that copy.
    bool copies_input = false;
    // Every candidate was timed. A choice whose timing ran out of its budget serves this
    // framecld's sessions but is not written to tuning.json: the next start tunes again.
    bool complete = true;
    // A run's fusion (choice.variant "fused" or "unfused"): the time of the other way.
    uint64_t other_ns = 0;
    // A fused run that ends in a stencil taking loads: the stencil's choice when fused,
    // where another of its variants that takes loads ran the run faster than the one
    // chosen for the stage alone (whose tuning timed it without the stages in its
    // loads). Empty: the stage's own choice.
    StageChoice stencil{};
};

// The most choices tuning.json keeps: every frame size a client opens a session for
// is tuned and kept, so a client inventing sizes would grow the file (rewritten and
// fsync'd at each new choice) without end. Past this, the least recently used goes.
inline constexpr size_t max_tuning_choices = 256;

class Tuner {
public:
    // Reads `<cache_dir>/tuning.json`; one that is missing or unreadable starts empty
    // (logged). `budget` bounds the timing of one stage: candidates not reached by
    // then are skipped (logged), so a slow device is not held for long.
    // `kernel_budget_ns` (gpu.kernel_budget_ms) cuts the candidates' frames as every
    // session's are (StageTimer::open); 0: whole frames.
    // With `compile_ahead`, each candidate is timed once its helper has compiled it.
    Tuner(const gpu::GpuContext& gpu, std::filesystem::path cache_dir,
          std::chrono::milliseconds budget = std::chrono::milliseconds(config::GpuConfig{}.tuning_budget_ms),
          uint64_t kernel_budget_ns = 0, std::shared_ptr<const CompileAhead> compile_ahead = nullptr);

    // One choice per stage of `pipeline` on frames of `input`: cached, or timed now and
    // stored (at most max_tuning_choices, the least recently used dropped). A stage
    // with nothing to tune, or whose timing failed, gets the empty choice (as
    // configured). One thread at a time; describe() may be called from another.
    // `report`, if given, hears how the timing goes as it begins and then about once a
    // second (between candidates): "tuning stage 2 of 3 (epsilon radius=4 threshold=20)
    // for R8 3264x2448: candidate 5 of 34".
    // `cancelled` (SessionPreparer's), once set, ends the timing between two frames; the
    // stages not chosen by then get the empty choice, and nothing is kept. Every part of
    // the timed frames takes its turn through `turns` (null: at once). Then each run of
    // stages that fuses (pipeline/fusion.hpp) is timed fused and unfused, on the stages'
    // choices, and its first stage's choice keeps the faster (StageChoice::fuse): a
    // stencil that computes a producer again for every sample of its window can lose.
    // A run ending in a stencil that takes loads, its variant left to auto, is also
    // timed fused with each of the stencil's other variants that take loads (the
    // driver's work group), and the fastest fused way may replace the stencil's choice.
    std::vector<StageChoice> choose(const PipelineDefinition& pipeline, const FrameShape& input,
                                    const std::function<void(const std::string&)>& report = {},
                                    const std::atomic<bool>* cancelled = nullptr, GpuTurns* turns = nullptr);

    // What is chosen for `pipeline` on this device, one line per stage and frame size,
    // for `framecl pipelines`: "stage 2 (epsilon) on R8 1920x1080: variant branchless,
    // work group 16x16, 0.412 ms"; and per run that fuses: "stages 1-2 (color, epsilon)
    // on ABGR8888 1920x1080: unfused, 48.142 ms (fused 85.627 ms)", or "fused, stage 2 as
    // variant pixel, ...".
    std::vector<std::string> describe(const PipelineDefinition& pipeline) const;

    // The candidates for a stage: where its variant is left to `auto`, the plugin's own
    // choice first, with the driver's work-group size (the one to beat, and what the
    // stage runs with if nothing beats it in time); then its variants (or the
    // configured one), each with the driver's work-group size, then each with the fixed
    // shapes its dispatches allow.
    static std::vector<StageChoice> candidates(const StageDefinition& stage, const FrameShape& input,
                                               size_t max_work_group_size);

private:
    std::string stageKey(const StageDefinition& stage) const;
    // "<device>|fusion|<stage keys of first..last, joined by +>|": the key of a run's
    // fusion choices, followed by the frame and the stages' choices.
    std::string fusionPrefix(const PipelineDefinition& pipeline, size_t first, size_t last) const;
    // For each run that fuses on `chosen` (pipeline/fusion.hpp), the cached answer or
    // the run timed fused and unfused; sets its first stage's StageChoice::fuse to the
    // faster. True where a new answer is to be saved. `lock` (on mutex_) is held but
    // while timing.
    bool chooseFusion(const PipelineDefinition& pipeline, const FrameShape& input, std::vector<StageChoice>& chosen,
                      std::unique_lock<std::mutex>& lock, const std::function<void(const std::string&)>& report,
                      const std::atomic<bool>* cancelled, GpuTurns* turns);
    // No choice (gpu_ns 0) where either way failed or `cancelled` was set. `stencils`:
    // the other choices of the run's last stage to time fused (loadsAlternatives).
    TunedStage timeFusion(const PipelineDefinition& pipeline, size_t first, size_t last, const FrameShape& input,
                          const std::vector<StageChoice>& chosen, const std::vector<StageChoice>& stencils,
                          const std::atomic<bool>* cancelled, GpuTurns* turns);
    // No choice (gpu_ns 0) where nothing ran or `cancelled` was set.
    TunedStage tune(const PipelineDefinition& pipeline, size_t stage, const FrameShape& input,
                    const std::function<void(size_t candidate, size_t candidates)>& report,
                    const std::atomic<bool>* cancelled, GpuTurns* turns);
    void save() const;

    const gpu::GpuContext* gpu_;
    std::filesystem::path file_;
    std::chrono::milliseconds budget_;
    uint64_t kernel_budget_ns_;
    std::shared_ptr<const CompileAhead> compile_ahead_; // null: kernels compile at first launch
    mutable std::mutex mutex_; // guards choices_ and uses_
    std::map<std::string, TunedStage> choices_; // by stageKey + "|" + frame
    uint64_t uses_ = 0; // the last TunedStage::last_used given
};

// "radius=4 threshold=20 border=replicate variant=auto": every parameter of a stage in
// schema order, as the tuning cache keys it.
std::string parameterText(const StageDefinition& stage);

} // namespace framecl::pipeline
