#pragma once
// One pipeline opened for one input format and size. Opening it negotiates formats
// stage by stage, asks each plugin for its plan, places every intermediate (on-chip
// where the device and the recording allow, else device buffers shared by lifetime),
// creates every kernel and binds every argument that does not change between frames.
// A frame then changes only the arguments naming its input and output buffers, and
// replays the dispatches the way gpu.recording chose — nothing is allocated and
// nothing blocks on the frame path.

#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "framecl/format.h"
#include "gpu/context.hpp"
#include "gpu/replay.hpp"
#include "pipeline/pipeline_definition.hpp"

namespace framecl::pipeline {

using FrameShape = framecl_format;

inline bool sameShape(const FrameShape& a, const FrameShape& b)
{
    return a.fourcc == b.fourcc && a.width == b.width && a.height == b.height;
}

// A buffer of the client's (or a host staging buffer) as one frame uses it.
struct FrameBuffer {
    cl_mem mem;
    const framecl_frame_layout* layout;
};

// The work of one frame in flight: one event per dispatch, or one for the whole
// recording.
struct EnqueuedFrame {
    std::vector<cl::Event> events;
};

// How one stage runs, as the tuner chose (pipeline/tuner.hpp) or framecl-bench asks:
// `variant` replaces the value of the plugin's `variant` parameter; `local` is the
// work-group size of each dispatch whose plan leaves it to the daemon. Empty and
// {0, 0}: as configured, and the driver's choice.
struct StageChoice {
    std::string variant;
    std::array<size_t, 2> local{0, 0};
};

struct SessionOptions {
    gpu::RecordingMode recording = gpu::RecordingMode::Off;
    bool onchip_intermediates = true; // used only with the qcom recording
    std::vector<StageChoice> stage_choices; // none, or one per stage
    // The most pixels any frame of the session may have: its input, the output and
    // intermediates a stage negotiates (a scaler may ask for far more than it reads).
    // 0: no limit.
    uint64_t max_frame_pixels = 0;
};

class Session {
public:
    static Result<std::unique_ptr<Session>> open(const gpu::GpuContext& gpu,
                                                 std::shared_ptr<const PipelineDefinition> pipeline,
                                                 const FrameShape& input, const SessionOptions& options);
    ~Session();

    const std::string& pipelineName() const { return pipeline_->name; }
    const FrameShape& input() const { return input_; }
    const FrameShape& output() const { return output_; }
    const std::vector<std::string>& stageNames() const { return stage_names_; }
    gpu::RecordingMode recording() const { return recording_; }
    // Intermediates placed in on-chip memory, and the bytes they use there.
    size_t onchipIntermediates() const { return onchip_count_; }
    uint64_t onchipBytes() const { return onchip_bytes_; }

    // Whether a buffer's layout can carry this session's input (or output) frames.
    Result<void> checkInput(const framecl_frame_layout& layout) const;
    Result<void> checkOutput(const framecl_frame_layout& layout) const;

    // Enqueues one frame reading `in` and writing `out`, whose layouts passed the
    // checks above. Returns at once.
    Result<EnqueuedFrame> enqueue(const FrameBuffer& in, const FrameBuffer& out);

    // GPU time of each stage of a completed frame: one entry per stage when each
    // dispatch has its own event; one entry, "recording", when the frame ran as one
    // recording.
    std::vector<std::pair<std::string, uint64_t>> stageTimes(const EnqueuedFrame& frame) const;

private:
    // Three consecutive kernel arguments (buffer, plane offset, plane stride) that the
    // frame's input or output buffer fills.
    struct FrameArg {
        uint32_t dispatch;
        cl_uint index;
        bool output;
        uint32_t plane;
    };

    Session(const gpu::GpuContext& gpu, std::shared_ptr<const PipelineDefinition> pipeline, FrameShape input)
        : gpu_(&gpu), pipeline_(std::move(pipeline)), input_(input)
    {
    }
    std::vector<gpu::ArgUpdate> frameUpdates(const FrameBuffer& in, const FrameBuffer& out) const;

    const gpu::GpuContext* gpu_;
    std::shared_ptr<const PipelineDefinition> pipeline_;
    FrameShape input_;
    FrameShape output_{};
    std::vector<std::string> stage_names_;
    std::vector<uint32_t> dispatch_stage_; // stage of each dispatch
    std::vector<cl::Buffer> buffers_;      // device and on-chip intermediates, plan constants
    std::vector<FrameArg> frame_args_;
    std::vector<gpu::ReplayDispatch> dispatches_; // until the first frame records them
    gpu::RecordingMode recording_ = gpu::RecordingMode::Off;
    std::unique_ptr<gpu::Replay> replay_;
    size_t onchip_count_ = 0;
    uint64_t onchip_bytes_ = 0;
};

// The text of kernel source `file`, from the first of `kernel_dirs` holding it.
Result<std::string> readKernelSource(const std::vector<std::filesystem::path>& kernel_dirs, const std::string& file);

} // namespace framecl::pipeline
