#include "pair_timer.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"

namespace framecl::bench {
namespace {

// A device buffer holding `content`, or of undefined content for an output (`bytes`).
Result<cl::Buffer> frameBuffer(const gpu::GpuContext& gpu, uint64_t bytes, const std::vector<uint8_t>* content)
{
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer(gpu.context(), CL_MEM_READ_WRITE | (content ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                      content ? const_cast<uint8_t*>(content->data()) : nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, fmt::format("a timing frame of {} bytes", bytes)));
    return buffer;
}

} // namespace

Result<PairTimer> PairTimer::open(const gpu::GpuContext& gpu, std::shared_ptr<const pipeline::PipelineDefinition> stage,
                                  const pipeline::FrameShape& input, const Motion& motion)
{
    if (input.fourcc != DRM_FORMAT_R8)
        return fail(fmt::format("a moving pair is made of R8 frames, not {}", pipeline::describe(input)));
    // A is StageTimer's random frame: the case runs on the bench's usual input.
    auto still = pipeline::StageTimer::open(gpu, stage, input);
    if (!still)
        return tl::unexpected(still.error());
    auto still_bytes = still->inputBytes();
    if (!still_bytes)
        return tl::unexpected(still_bytes.error());

    PairTimer timer;
    timer.gpu_ = &gpu;
    timer.stage_ = std::move(stage);
    timer.input_ = input;
    timer.motion_ = motion;
    timer.input_bytes_ = framecl_packed_layout(input.fourcc, input.width, input.height, &timer.input_layout_);
    timer.still_ = std::move(*still_bytes);
    timer.moved_.resize(timer.still_.size());
    const int64_t width = input.width, height = input.height;
    for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
            timer.moved_[size_t(y * width + x)] =
                timer.still_[size_t(std::clamp<int64_t>(y - motion.dy, 0, height - 1) * width +
                                    std::clamp<int64_t>(x - motion.dx, 0, width - 1))];
    auto still_buffer = frameBuffer(gpu, timer.input_bytes_, &timer.still_);
    if (!still_buffer)
        return tl::unexpected(still_buffer.error());
    auto moved_buffer = frameBuffer(gpu, timer.input_bytes_, &timer.moved_);
    if (!moved_buffer)
        return tl::unexpected(moved_buffer.error());
    timer.still_buffer_ = std::move(*still_buffer);
    timer.moved_buffer_ = std::move(*moved_buffer);
    return timer;
}

Result<pipeline::StageTimes> PairTimer::time(const std::vector<pipeline::StageChoice>& choices, int warmup,
                                             int runs)
{
    pipeline::SessionOptions options;
    options.recording = gpu::RecordingMode::Off;
    options.stage_choices = choices;
    auto session = pipeline::Session::open(*gpu_, stage_, input_, options);
    if (!session)
        return tl::unexpected(session.error());
    output_ = (*session)->output();
    if (!output_buffer_()) {
        output_bytes_ = framecl_packed_layout(output_.fourcc, output_.width, output_.height, &output_layout_);
        auto buffer = frameBuffer(*gpu_, output_bytes_, nullptr);
        if (!buffer)
            return tl::unexpected(buffer.error());
        output_buffer_ = std::move(*buffer);
    }
    if (auto fits = (*session)->checkOutput(output_layout_); !fits)
        return tl::unexpected(fits.error());

    // Frame i is A for even i, B for odd: frame 0 has no previous frame, and the last is B.
    const int timed_from = 1 + warmup, timed_end = timed_from + runs;
    const int frames = timed_end + timed_end % 2;
    pipeline::StageTimes times;
    for (int i = 0; i < frames; ++i) {
        const cl::Buffer& in = i % 2 == 0 ? still_buffer_ : moved_buffer_;
        const auto started = std::chrono::steady_clock::now();
        auto frame = (*session)->enqueue({in(), &input_layout_}, {output_buffer_(), &output_layout_});
        if (!frame)
            return tl::unexpected(frame.error());
        if (cl_int err = gpu_->queue().finish(); err != CL_SUCCESS)
            return fail(gpu::clFailure("clFinish", err, "a timed frame"));
        const auto ended = std::chrono::steady_clock::now();
        if (i < timed_from || i >= timed_end)
            continue;
        const uint64_t wall_ns =
            uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(ended - started).count());
        // On the host's clock (gpu/timestamps.hpp) the frame's time is its wall time.
        uint64_t total = gpu_->clock().device() ? 0 : wall_ns;
        for (const auto& stage : (*session)->stageTimes(*frame))
            total += stage.second;
        times.gpu_ns.push_back(total);
        times.copy_ns.push_back((*session)->inputCopyNs(*frame));
        times.wall_ns.push_back(wall_ns);
    }
    return times;
}

Result<void> PairTimer::checkOutput() const
{
    auto output = outputBytes();
    if (!output)
        return tl::unexpected(output.error());
    const int64_t width = input_.width, height = input_.height, block = motion_.block;
    if (output_.fourcc != DRM_FORMAT_ABGR8888 || output_.width != (width + block - 1) / block ||
        output_.height != (height + block - 1) / block)
        return fail(fmt::format("wrong output: {}, not ABGR8888 of one pixel per block of {}",
                                pipeline::describe(output_), block));
    uint64_t checked = 0, wrong = 0;
    std::string first_wrong;
    for (int64_t by = 0; by < output_.height; ++by)
        for (int64_t bx = 0; bx < output_.width; ++bx) {
            const int64_t x0 = bx * block, y0 = by * block;
            const int64_t x1 = std::min(x0 + block, width), y1 = std::min(y0 + block, height);
            if (x0 - motion_.dx < 0 || x1 - motion_.dx > width || y0 - motion_.dy < 0 || y1 - motion_.dy > height)
                continue;
            ++checked;
            const uint8_t* pixel = output->data() + 4 * (by * output_.width + bx);
            const int dx = int8_t(pixel[0]), dy = int8_t(pixel[1]);
            const unsigned cost = pixel[2] | unsigned(pixel[3]) << 8;
            if ((dx != motion_.dx || dy != motion_.dy || cost != 0) && wrong++ == 0)
                first_wrong = fmt::format("block ({}, {}) gives ({}, {}) at cost {}", bx, by, dx, dy, cost);
        }
    if (checked == 0)
        return fail(fmt::format("unchecked output: no block of {} stays inside the frame moved by ({}, {})", block,
                                motion_.dx, motion_.dy));
    if (wrong > 0)
        return fail(fmt::format("wrong output: {} of the {} blocks moved by ({}, {}) inside the frame give another "
                                "motion or a cost above 0; {}",
                                wrong, checked, motion_.dx, motion_.dy, first_wrong));
    return {};
}

Result<std::vector<uint8_t>> PairTimer::outputBytes() const
{
    if (!output_buffer_())
        return fail("no frame has run");
    std::vector<uint8_t> content(output_bytes_);
    if (cl_int err = gpu_->queue().enqueueReadBuffer(output_buffer_, CL_TRUE, 0, output_bytes_, content.data());
        err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueReadBuffer", err, "a timing frame"));
    return content;
}

} // namespace framecl::bench
