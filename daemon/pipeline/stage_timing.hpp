#pragma once
// The GPU time of one pipeline stage alone, as the tuner and framecl-bench measure it,
// or of a whole pipeline (framecl-bench's pipeline cases): sessions on device buffers of
// random content, each frame's time from the profiling events of its dispatches
// (recording off, so that every dispatch has one), or on a device timed by the host's
// clock (gpu/timestamps.hpp) from before its enqueue to after the wait for its last part.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/result.hpp"
#include "gpu/context.hpp"
#include "pipeline/gpu_turns.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

// Stage `stage` of `pipeline` as a pipeline of its own, sharing the plugins and
// programs (the stage's parameters copied).
std::shared_ptr<const PipelineDefinition> singleStage(const PipelineDefinition& pipeline, size_t stage);

// Stages first..last of `pipeline` as a pipeline of their own, fused as it is: a run
// the tuner times fused and unfused.
std::shared_ptr<const PipelineDefinition> stageRange(const PipelineDefinition& pipeline, size_t first, size_t last);

// `pipeline` with its stages never fused (pipeline/fusion.hpp), sharing the plugins and
// programs (the parameters copied): what fusion is measured against.
std::shared_ptr<const PipelineDefinition> unfused(const PipelineDefinition& pipeline);

// The times of a stage's timed runs, in nanoseconds, one per run.
struct StageTimes {
    std::vector<uint64_t> gpu_ns;  // from the dispatches' profiling events, added up; wall_ns on the host's clock
    std::vector<uint64_t> wall_ns; // on the host, from before the enqueue to after clFinish
    // Of gpu_ns, the daemon's copies of input planes into the images the stage reads
    // (Session::inputCopies); a stage whose input another stage writes as an image
    // spends gpu_ns - copy_ns.
    std::vector<uint64_t> copy_ns;
    size_t parts = 0; // the parts of each frame, each waited for before the next
    // Per stage, in order, its dispatches' time in each run (gpu_ns is their sum); none
    // on the host's clock.
    std::vector<std::vector<uint64_t>> stage_ns;
    // From the first dispatch's start to the last one's end, in each run: gpu_ns and the
    // device's gaps between the dispatches (wall_ns on the host's clock).
    std::vector<uint64_t> span_ns;
};

// When StageTimer::time() stops before its last frame.
struct StopEarly {
    // After the first timed frame, when its GPU time is over this (0: never).
    uint64_t hopeless_ns = 0;
    // Once as many timed frames as decide the median took more than this: the median
    // cannot come out under it (0: never).
    uint64_t beat_ns = 0;
    // Set by another thread: time() fails between two frames, its work waited for.
    const std::atomic<bool>* cancelled = nullptr;
};

// A pipeline (one stage, for the tuner) and the frames it runs on, made once so that
// every candidate (variant, work-group size) is timed on the same bytes.
class StageTimer {
public:
    // With `kernel_budget_ns` (gpu.kernel_budget_ms; 0: none) each session is cut into
    // tiles for it as a client's is, and each part of a frame is waited for before the
    // next goes to the GPU: the tuner's work then holds another client's frame up for
    // about one part, as any client's does, however large the frame. Each part, and
    // each piece of the sessions' opening, takes its turn through `turns` (null: at once).
    static Result<StageTimer> open(const gpu::GpuContext& gpu, std::shared_ptr<const PipelineDefinition> stage,
                                   const FrameShape& input, uint64_t kernel_budget_ns = 0,
                                   GpuTurns* turns = nullptr);

    // Opens a session with `choices` (none, or one per stage), runs `warmup` frames, then
    // `runs` frames one at a time, each waited for, and returns their times, fewer where
    // `stop` says (the tuner's candidate that cannot win; cancelled, between two parts).
    Result<StageTimes> time(const std::vector<StageChoice>& choices, int warmup, int runs,
                            const StopEarly& stop = {});

    // The input frame and the output of the last frame time() ran, tightly packed, read
    // back from the device (for a check of the output against another implementation).
    Result<std::vector<uint8_t>> inputBytes() const;
    Result<std::vector<uint8_t>> outputBytes() const;

    const FrameShape& input() const { return input_; }
    // The output's shape (known once a time() succeeded).
    const FrameShape& output() const { return output_; }
    // The stages' names, and the statistics of the last frame time() ran where a stage
    // makes them (null otherwise).
    const std::vector<std::string>& stageNames() const { return stage_names_; }
    const std::shared_ptr<framecl_statistics>& statistics() const { return statistics_; }
    // Bytes of the input and output frames, tightly packed: what one frame reads and
    // writes at the least (known once a time() succeeded).
    uint64_t frameBytes() const { return input_bytes_ + output_bytes_; }

private:
    StageTimer() = default;

    const gpu::GpuContext* gpu_ = nullptr;
    uint64_t kernel_budget_ns_ = 0;
    GpuTurns* turns_ = nullptr;
    std::shared_ptr<const PipelineDefinition> stage_;
    FrameShape input_{};
    FrameShape output_{};
    framecl_frame_layout input_layout_{};
    framecl_frame_layout output_layout_{};
    uint64_t input_bytes_ = 0;
    uint64_t output_bytes_ = 0;
    cl::Buffer input_buffer_;
    cl::Buffer output_buffer_; // made for the output size of the first session
    std::vector<std::string> stage_names_;
    std::shared_ptr<framecl_statistics> statistics_;
};

// The median of `values` (the lower middle one for an even count); 0 when empty.
uint64_t median(std::vector<uint64_t> values);

} // namespace framecl::pipeline
