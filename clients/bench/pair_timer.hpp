#pragma once
// The GPU time of a stage whose output depends on the session's previous frame
// (blockmatch), on a moving pair of frames (bench_cases.hpp, Motion), and the check of
// its output against the motion: as pipeline::StageTimer, whose one input run every
// frame would match each frame with itself.

#include <cstdint>
#include <memory>
#include <vector>

#include "bench_cases.hpp"
#include "pipeline/stage_timing.hpp"

namespace framecl::bench {

class PairTimer {
public:
    // A is the frame StageTimer times the stage on (R8), B is A moved by `motion`.
    static Result<PairTimer> open(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> stage,
                                  const pipeline::FrameShape& input, const Motion& motion);

    // As StageTimer::time, on frames A, B, A, B, ...: the first, A, has no previous frame
    // and is not timed; then `warmup` frames and `runs` timed ones; then one more B,
    // untimed, where the last was A, so that the output is always B's against A.
    Result<pipeline::StageTimes> time(const std::vector<pipeline::StageChoice>& choices, int warmup, int runs);

    // Fails, saying how, where the last output does not give the motion at cost 0 for a
    // block whose pixels B took from inside A: random content matches nowhere else there.
    // A block that B took partly from A's replicated sides may match as well at a smaller
    // motion, which the tie rule prefers (moved up by 2, B's last two rows are both A's
    // last row, and match at dy = -1 too): those are not checked. Fails as well where no
    // block is left to check (a frame too small for the motion).
    Result<void> checkOutput() const;

    // B, the last frame, whose output outputBytes() reads back; A, the frame before it.
    Result<std::vector<uint8_t>> inputBytes() const { return moved_; }
    const std::vector<uint8_t>& previousBytes() const { return still_; }
    Result<std::vector<uint8_t>> outputBytes() const;

    const pipeline::FrameShape& input() const { return input_; }
    // The output's shape (known once a time() succeeded).
    const pipeline::FrameShape& output() const { return output_; }
    // As StageTimer::frameBytes: the input and output frames, tightly packed.
    uint64_t frameBytes() const { return input_bytes_ + output_bytes_; }

private:
    PairTimer() = default;

    const gpu::GpuContext* gpu_ = nullptr;
    std::shared_ptr<const pipeline::PipelineDefinition> stage_;
    pipeline::FrameShape input_{};
    pipeline::FrameShape output_{};
    Motion motion_{};
    framecl_frame_layout input_layout_{};
    framecl_frame_layout output_layout_{};
    uint64_t input_bytes_ = 0;
    uint64_t output_bytes_ = 0;
    std::vector<uint8_t> still_; // A
    std::vector<uint8_t> moved_; // B
    cl::Buffer still_buffer_;
    cl::Buffer moved_buffer_;
    cl::Buffer output_buffer_; // made for the output size of the first session
};

} // namespace framecl::bench
