// Frames through sessions for the self-test's checks (checks.hpp): from host memory,
// and between buffers shared the way a client shares them.
#include <cerrno>
#include <cstring>
#include <random>

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "gpu/replay.hpp"
#include "pipeline/client_frame.hpp"
#include "pipeline/in_process_pipeline.hpp"
#include "selftest/checks.hpp"

namespace framecl::selftest {

pipeline::SessionOptions sessionOptions(const SelfTestDevice& device, gpu::RecordingMode recording)
{
    pipeline::SessionOptions options;
    options.recording = recording;
    options.onchip_intermediates = device.config.gpu.onchip_intermediates;
    options.max_frame_pixels = device.config.limits.max_frame_pixels;
    options.kernel_budget_ns = uint64_t(device.config.gpu.kernel_budget_ms * 1e6);
    return options;
}

Result<std::shared_ptr<const pipeline::PipelineDefinition>> findPipeline(const SelfTestDevice& device,
                                                                         const std::string& name)
{
    if (auto found = device.catalog.find(name))
        return found;
    const auto why = device.catalog.left_out.find(name);
    return fail(why != device.catalog.left_out.end() ? why->second : "pipeline '" + name + "' was not built");
}

Result<PackedFrame> runFrames(const SelfTestDevice& device, std::shared_ptr<const pipeline::PipelineDefinition> pipeline,
                              const pipeline::FrameShape& input, const pipeline::SessionOptions& options,
                              const std::vector<PackedFrame>& frames)
{
    auto run = pipeline::InProcessPipeline::open(device.gpu, std::move(pipeline), input, options);
    if (!run)
        return tl::unexpected(run.error());
    PackedFrame last;
    for (const PackedFrame& frame : frames) {
        auto output = run->process({input.fourcc, input.width, input.height, frame});
        if (!output)
            return tl::unexpected(output.error());
        last = std::move(output->bytes);
    }
    return last;
}

std::string differences(const PackedFrame& got, const PackedFrame& expected, int tolerance)
{
    if (got.size() != expected.size())
        return fmt::format("{} bytes out, {} expected", got.size(), expected.size());
    size_t count = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(int(got[i]) - int(expected[i])) > tolerance && count++ == 0)
            first = i;
    if (count == 0)
        return {};
    return fmt::format("{} of {} bytes differ by more than {}; the first at byte {}: {}, expected {}", count,
                       got.size(), tolerance, first, got[first], expected[first]);
}

Result<UniqueFd> memfdWith(const PackedFrame& content, size_t bytes)
{
    UniqueFd fd(memfd_create("framecl-self-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid())
        return fail(fmt::format("memfd_create: {}", std::strerror(errno)));
    if (ftruncate(fd.get(), off_t(bytes)) != 0 ||
        (!content.empty() && pwrite(fd.get(), content.data(), content.size(), 0) != ssize_t(content.size())) ||
        fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
        return fail(fmt::format("a memfd of {} bytes: {}", bytes, std::strerror(errno)));
    return fd;
}

Result<std::shared_ptr<memory::ImportedBuffer>> importShared(const SelfTestDevice& device, UniqueFd fd,
                                                            const pipeline::FrameShape& shape)
{
    framecl_frame_layout layout{};
    if (framecl_packed_layout(shape.fourcc, shape.width, shape.height, &layout) == 0)
        return fail("no packed layout for " + pipeline::describe(shape));
    return memory::importBuffer(device.gpu, std::move(fd), layout, device.config.limits.max_frame_pixels);
}

namespace {

// One frame through `session` from `input` to `output` on the session's first lane,
// as the scheduler runs a client's (uploads, hand-offs and CPU access brackets
// included), waited for.
Result<void> runImported(const SelfTestDevice& device, pipeline::Session& session, const memory::ImportedBuffer& input,
                         const memory::ImportedBuffer& output)
{
    const uint32_t lane = session.lanes().front();
    input.beginAccess(memory::ImportedBuffer::Access::Read);
    output.beginAccess(memory::ImportedBuffer::Access::Write);
    auto frame = pipeline::beginClientFrame(session, input, output);
    Result<void> ran;
    while (frame && !frame->frame.allEnqueued())
        if (auto part = pipeline::enqueueClientPart(session, input, output, *frame, lane); !part) {
            ran = tl::unexpected(part.error());
            break;
        }
    if (!frame)
        ran = tl::unexpected(frame.error());
    else if (const cl_int err = device.gpu.finishAll(); err != CL_SUCCESS && ran)
        ran = fail(gpu::clFailure("clFinish", err, "a self-test frame"));
    input.endAccess(memory::ImportedBuffer::Access::Read);
    output.endAccess(memory::ImportedBuffer::Access::Write);
    return ran;
}

} // namespace

Result<PackedFrame> readShared(int fd, size_t bytes)
{
    void* mapping = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED)
        return fail(fmt::format("mapping {} bytes to read back: {}", bytes, std::strerror(errno)));
    dma_buf_sync sync{DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ};
    const bool dma_buf = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) == 0;
    PackedFrame content(static_cast<const uint8_t*>(mapping), static_cast<const uint8_t*>(mapping) + bytes);
    if (dma_buf) {
        sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
        ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
    }
    munmap(mapping, bytes);
    return content;
}

Result<SharedRun> runShared(const SelfTestDevice& device, pipeline::Session& session, const PackedFrame& input,
                            const MakeBuffer& make)
{
    const pipeline::FrameShape& in_shape = session.input();
    const pipeline::FrameShape& out_shape = session.output();
    framecl_frame_layout out_layout{};
    const size_t out_bytes = framecl_packed_layout(out_shape.fourcc, out_shape.width, out_shape.height, &out_layout);
    auto in_fd = make(input, input.size());
    if (!in_fd)
        return tl::unexpected(in_fd.error());
    auto out_fd = make({}, out_bytes);
    if (!out_fd)
        return tl::unexpected(out_fd.error());
    const UniqueFd reader(dup(out_fd->get())); // the import takes the fd
    if (!reader.valid())
        return fail(fmt::format("dup: {}", std::strerror(errno)));
    auto in = importShared(device, std::move(*in_fd), in_shape);
    if (!in)
        return tl::unexpected(in.error());
    auto out = importShared(device, std::move(*out_fd), out_shape);
    if (!out)
        return tl::unexpected(out.error());
    if (auto ran = runImported(device, session, **in, **out); !ran)
        return tl::unexpected(ran.error());
    auto output = readShared(reader.get(), out_bytes);
    if (!output)
        return tl::unexpected(output.error());
    return SharedRun{std::move(*output), (*in)->path()};
}

PackedFrame randomFrame(const pipeline::FrameShape& shape, uint32_t seed)
{
    framecl_frame_layout layout{};
    PackedFrame frame(framecl_packed_layout(shape.fourcc, shape.width, shape.height, &layout));
    std::mt19937 random(seed);
    for (uint8_t& byte : frame)
        byte = uint8_t(random());
    return frame;
}

} // namespace framecl::selftest
