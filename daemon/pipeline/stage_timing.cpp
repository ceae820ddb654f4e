#include "pipeline/stage_timing.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"

namespace framecl::pipeline {
namespace {

// A device buffer of `bytes` random bytes (fixed seed: every run sees the same frame),
// or of undefined content for an output.
Result<cl::Buffer> frameBuffer(const gpu::GpuContext& gpu, uint64_t bytes, bool random)
{
    std::vector<uint8_t> content;
    if (random) {
        content.resize(bytes);
        std::mt19937 generator(20261123);
        for (auto& byte : content)
            byte = uint8_t(generator());
    }
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer(gpu.context(), CL_MEM_READ_WRITE | (random ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                      random ? content.data() : nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, fmt::format("a timing frame of {} bytes", bytes)));
    return buffer;
}

} // namespace

std::shared_ptr<const PipelineDefinition> singleStage(const PipelineDefinition& pipeline, size_t stage)
{
    return stageRange(pipeline, stage, stage);
}

std::shared_ptr<const PipelineDefinition> stageRange(const PipelineDefinition& pipeline, size_t first, size_t last)
{
    auto range = std::make_shared<PipelineDefinition>();
    range->name = first == last ? fmt::format("{} stage {}", pipeline.name, first + 1)
                                : fmt::format("{} stages {}-{}", pipeline.name, first + 1, last + 1);
    for (size_t k = first; k <= last; ++k) {
        const StageDefinition& original = pipeline.stages[k];
        range->stages.push_back({original.plugin, original.params.copy(), original.label, original.where});
    }
    range->registry = pipeline.registry;
    range->programs = pipeline.programs;
    range->where = pipeline.where;
    range->fuse = pipeline.fuse;
    return range;
}

std::shared_ptr<const PipelineDefinition> unfused(const PipelineDefinition& pipeline)
{
    auto copy = std::make_shared<PipelineDefinition>();
    copy->name = pipeline.name;
    for (const StageDefinition& stage : pipeline.stages)
        copy->stages.push_back({stage.plugin, stage.params.copy(), stage.label, stage.where});
    copy->registry = pipeline.registry;
    copy->programs = pipeline.programs;
    copy->where = pipeline.where;
    copy->fuse = false;
    return copy;
}

Result<StageTimer> StageTimer::open(const gpu::GpuContext& gpu, std::shared_ptr<const PipelineDefinition> stage,
                                    const FrameShape& input, uint64_t kernel_budget_ns, GpuTurns* turns)
{
    StageTimer timer;
    timer.gpu_ = &gpu;
    timer.kernel_budget_ns_ = kernel_budget_ns;
    timer.turns_ = turns;
    timer.stage_ = std::move(stage);
    timer.input_ = input;
    timer.input_bytes_ = framecl_packed_layout(input.fourcc, input.width, input.height, &timer.input_layout_);
    if (timer.input_bytes_ == 0)
        return fail(fmt::format("{} is not a frame framecld can hold", describe(input)));
    auto buffer = frameBuffer(gpu, timer.input_bytes_, true);
    if (!buffer)
        return tl::unexpected(buffer.error());
    timer.input_buffer_ = std::move(*buffer);
    return timer;
}

Result<StageTimes> StageTimer::time(const std::vector<StageChoice>& choices, int warmup, int runs,
                                    const StopEarly& stop)
{
    SessionOptions options;
    options.recording = gpu::RecordingMode::Off;
    options.stage_choices = choices;
    options.kernel_budget_ns = kernel_budget_ns_;
    options.cancelled = stop.cancelled;
    options.turns = turns_;
    auto session = Session::open(*gpu_, stage_, input_, options);
    if (!session)
        return tl::unexpected(session.error());
    const FrameShape& output = (*session)->output();
    output_ = output;
    stage_names_ = (*session)->stageNames();
    if (!output_buffer_()) {
        output_bytes_ = framecl_packed_layout(output.fourcc, output.width, output.height, &output_layout_);
        auto buffer = frameBuffer(*gpu_, output_bytes_, false);
        if (!buffer)
            return tl::unexpected(buffer.error());
        output_buffer_ = std::move(*buffer);
    }
    if (auto fits = (*session)->checkOutput(output_layout_); !fits)
        return tl::unexpected(fits.error());

    StageTimes times;
    if (gpu_->clock().device())
        times.stage_ns.resize(stage_names_.size());
    int over_beat = 0;
    for (int i = 0; i < warmup + runs; ++i) {
        if (isCancelled(stop.cancelled))
            return fail(cancelled_text);
        const auto started = std::chrono::steady_clock::now();
        auto frame = (*session)->begin({input_buffer_(), &input_layout_}, {output_buffer_(), &output_layout_});
        if (!frame)
            return tl::unexpected(frame.error());
        const uint32_t lane = (*session)->lanes().front();
        times.parts = frame->parts();
        while (!frame->allEnqueued()) {
            auto part = enqueueInTurn(turns_, *gpu_, (*session)->predictedNs(*frame, frame->parts_enqueued), lane,
                                      [&] { return (*session)->enqueuePart(*frame, lane); });
            if (!part)
                return tl::unexpected(part.error());
            if (cl_int err = part->wait(); err != CL_SUCCESS)
                return fail(gpu::clFailure("clWaitForEvents", err, "a part of a timed frame"));
            if (isCancelled(stop.cancelled))
                return fail(cancelled_text);
        }
        const auto ended = std::chrono::steady_clock::now();
        if (i < warmup)
            continue;
        const uint64_t wall_ns =
            uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(ended - started).count());
        // On a device timed by the host's clock a frame's time is its wall time, and its
        // stages have none of their own (stage_ns stays empty).
        uint64_t total = gpu_->clock().device() ? 0 : wall_ns;
        const auto stages = (*session)->stageTimes(*frame);
        for (size_t s = 0; s < stages.size(); ++s) {
            total += stages[s].second;
            if (s < times.stage_ns.size())
                times.stage_ns[s].push_back(stages[s].second);
        }
        times.gpu_ns.push_back(total);
        const auto slices = (*session)->dispatchSlices(*frame);
        uint64_t first = UINT64_MAX, last = 0;
        for (const auto& slice : slices) {
            first = std::min(first, slice.start_ns);
            last = std::max(last, slice.end_ns);
        }
        times.span_ns.push_back(slices.empty() ? wall_ns : last - first);
        statistics_ = frame->statistics;
        times.copy_ns.push_back((*session)->inputCopyNs(*frame));
        times.wall_ns.push_back(wall_ns);
        if (stop.hopeless_ns > 0 && total > stop.hopeless_ns)
            break;
        over_beat += stop.beat_ns > 0 && total > stop.beat_ns;
        if (over_beat > runs / 2)
            break;
    }
    return times;
}

namespace {

Result<std::vector<uint8_t>> readBuffer(const gpu::GpuContext& gpu, const cl::Buffer& buffer, uint64_t bytes)
{
    std::vector<uint8_t> content(bytes);
    if (cl_int err = gpu.queue().enqueueReadBuffer(buffer, CL_TRUE, 0, bytes, content.data()); err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueReadBuffer", err, "a timing frame"));
    return content;
}

} // namespace

Result<std::vector<uint8_t>> StageTimer::inputBytes() const
{
    return readBuffer(*gpu_, input_buffer_, input_bytes_);
}

Result<std::vector<uint8_t>> StageTimer::outputBytes() const
{
    if (!output_buffer_())
        return fail("no frame has run");
    return readBuffer(*gpu_, output_buffer_, output_bytes_);
}

uint64_t median(std::vector<uint64_t> values)
{
    if (values.empty())
        return 0;
    const auto middle = values.begin() + long(values.size() - 1) / 2;
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

} // namespace framecl::pipeline
