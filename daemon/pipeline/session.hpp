#pragma once
// One pipeline opened for one input shape: every kernel built, every intermediate
// allocated and every argument that does not change between frames bound, once. A
// frame then sets only the arguments that name its input and output buffers and
// enqueues the dispatches — nothing is allocated and nothing blocks on the frame path.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "framecl/format.h"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"
#include "pipeline/builtin_stages.hpp"

namespace framecl::pipeline {

// A buffer of the client's (or a host staging buffer) as one frame uses it.
struct FrameBuffer {
    cl_mem mem;
    const framecl_frame_layout* layout;
};

// The dispatches of one frame in flight; each event completes with its dispatch.
struct EnqueuedFrame {
    std::vector<cl::Event> events;
};

class Session {
public:
    static Result<std::unique_ptr<Session>> open(const gpu::GpuContext& gpu, gpu::ProgramCache& programs,
                                                 const std::vector<std::filesystem::path>& kernel_dirs,
                                                 std::string pipeline_name,
                                                 const std::vector<const BuiltinStage*>& stages,
                                                 const FrameShape& input);

    const std::string& pipelineName() const { return pipeline_name_; }
    const FrameShape& input() const { return input_; }
    const FrameShape& output() const { return output_; }
    const std::vector<std::string>& stageNames() const { return stage_names_; }

    // Whether a buffer's layout can carry this session's input (or output) frames.
    Result<void> checkInput(const framecl_frame_layout& layout) const;
    Result<void> checkOutput(const framecl_frame_layout& layout) const;

    // Enqueues every dispatch of one frame, reading `in` and writing `out`, whose
    // layouts passed the checks above. Returns at once.
    Result<EnqueuedFrame> enqueue(const FrameBuffer& in, const FrameBuffer& out);

    // GPU time of each stage of a completed frame, from its profiling events.
    std::vector<uint64_t> stageTimes(const EnqueuedFrame& frame) const;

private:
    // A kernel argument the frame's input or output buffer fills (three consecutive
    // arguments: buffer, plane offset, plane stride).
    struct FrameArg {
        cl_uint index;
        PlaneArg::Side side;
        uint32_t plane;
    };
    struct Dispatch {
        std::string kernel_name;
        size_t stage;
        cl::Kernel kernel;
        cl::NDRange global;
        std::vector<FrameArg> frame_args;
    };

    Session(const gpu::GpuContext& gpu, std::string pipeline_name, FrameShape input)
        : gpu_(&gpu), pipeline_name_(std::move(pipeline_name)), input_(input)
    {
    }

    const gpu::GpuContext* gpu_;
    std::string pipeline_name_;
    FrameShape input_;
    FrameShape output_;
    std::vector<std::string> stage_names_;
    std::vector<cl::Buffer> intermediates_; // packed, device-only, between stages
    std::vector<framecl_frame_layout> intermediate_layouts_;
    std::vector<Dispatch> dispatches_;
};

// The text of kernel source `file`, from the first of `kernel_dirs` holding it.
Result<std::string> readKernelSource(const std::vector<std::filesystem::path>& kernel_dirs, const std::string& file);

} // namespace framecl::pipeline
