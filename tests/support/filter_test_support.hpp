#pragma once
// What the filter tests (tests/unit/filters) share: a device with the build's plugins
// and a test's pipelines, frames in buffers with padded rows and planes apart (as a
// camera's buffers are laid out), run through a Session, and pixel comparisons that
// say where they differ.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "pipeline/session.hpp"
#include "pipeline_test_support.hpp"
#include "shared_programs.hpp"

namespace framecl::test {

// What a frame's bytes outside its planes' rows hold before the frame runs, so that a
// test can see that a filter wrote nothing there.
inline constexpr uint8_t poison = 0xA5;

// Bytes per row of a frame's planes (NV12's two alike), as framecl_packed_layout packs
// them, and rows of plane `p`.
inline uint32_t planeRowBytes(uint32_t fourcc, uint32_t width)
{
    framecl_frame_layout packed{};
    REQUIRE(framecl_packed_layout(fourcc, width, 2, &packed) > 0);
    return packed.planes[0].stride;
}

inline uint32_t planeRows(uint32_t fourcc, uint32_t p, uint32_t height)
{
    return fourcc == DRM_FORMAT_NV12 && p == 1 ? height / 2 : height;
}

// A layout of `format` whose rows are each `padding` bytes longer than their pixels,
// whose first plane starts `padding` bytes into the buffer and whose every other plane
// starts `padding` bytes after the previous one ends; and the bytes it needs.
struct PaddedLayout {
    framecl_frame_layout layout;
    size_t size;
};

inline PaddedLayout paddedLayout(const framecl_format& format, uint32_t padding)
{
    framecl_frame_layout layout{};
    REQUIRE(framecl_packed_layout(format.fourcc, format.width, format.height, &layout) > 0);
    size_t end = 0;
    for (uint32_t p = 0; p < layout.num_planes; ++p) {
        layout.planes[p].offset = uint32_t(end + padding);
        layout.planes[p].stride = planeRowBytes(format.fourcc, format.width) + padding;
        end = layout.planes[p].offset + size_t(layout.planes[p].stride) * planeRows(format.fourcc, p, format.height);
    }
    return {layout, end + padding};
}

// A host buffer holding a frame of `layout`, random in every byte (seed > 0) or
// `poison` (seed 0), and the device buffer made from it.
struct LaidOutBuffer {
    framecl_frame_layout layout;
    std::vector<uint8_t> bytes;
    cl::Buffer mem;
    const gpu::GpuContext* gpu;

    LaidOutBuffer(const gpu::GpuContext& gpu_, const PaddedLayout& padded, uint32_t seed)
        : layout(padded.layout), bytes(padded.size, poison), gpu(&gpu_)
    {
        std::mt19937 random(seed);
        if (seed)
            for (auto& byte : bytes)
                byte = uint8_t(random());
        upload();
    }

    // A frame of `layout` in a buffer of `size` bytes.
    LaidOutBuffer(const gpu::GpuContext& gpu_, const framecl_frame_layout& layout_, size_t size, uint32_t seed)
        : LaidOutBuffer(gpu_, PaddedLayout{layout_, size}, seed)
    {
    }

    // Makes the device buffer from `bytes`, after a test changed them.
    void upload()
    {
        cl_int err = CL_SUCCESS;
        mem = cl::Buffer(gpu->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.size(), bytes.data(), &err);
        REQUIRE(err == CL_SUCCESS);
    }

    void readBack()
    {
        REQUIRE(gpu->queue().enqueueReadBuffer(mem, CL_TRUE, 0, bytes.size(), bytes.data()) == CL_SUCCESS);
    }

    uint8_t* rowStart(uint32_t p, uint32_t y)
    {
        return &bytes[layout.planes[p].offset + size_t(y) * layout.planes[p].stride];
    }

    // Row `y` of plane `p`, without its padding.
    std::vector<uint8_t> row(uint32_t p, uint32_t y) const
    {
        const size_t start = layout.planes[p].offset + size_t(y) * layout.planes[p].stride;
        const size_t end = start + planeRowBytes(layout.fourcc, layout.width);
        return {bytes.begin() + long(start), bytes.begin() + long(end)};
    }

    // Plane `p`'s rows, one after another, without their padding.
    std::vector<uint8_t> plane(uint32_t p) const
    {
        std::vector<uint8_t> all;
        for (uint32_t y = 0; y < planeRows(layout.fourcc, p, layout.height); ++y) {
            const auto r = row(p, y);
            all.insert(all.end(), r.begin(), r.end());
        }
        return all;
    }

    // Bytes outside every plane's rows that are no longer `poison`.
    size_t paddingWritten() const
    {
        std::vector<bool> inside(bytes.size(), false);
        const uint32_t row_bytes = planeRowBytes(layout.fourcc, layout.width);
        for (uint32_t p = 0; p < layout.num_planes; ++p)
            for (uint32_t y = 0; y < planeRows(layout.fourcc, p, layout.height); ++y)
                for (uint32_t x = 0; x < row_bytes; ++x)
                    inside[layout.planes[p].offset + size_t(y) * layout.planes[p].stride + x] = true;
        size_t written = 0;
        for (size_t i = 0; i < bytes.size(); ++i)
            written += !inside[i] && bytes[i] != poison;
        return written;
    }
};

// The test device (PoCL in CI) with the pipelines of `pipelines_toml`, resolved against
// the build's plugins.
struct FilterDevice {
    std::unique_ptr<gpu::GpuContext> gpu;
    std::unique_ptr<gpu::ProgramCache> cache;
    pipeline::PipelineSet pipelines;

    // `timestamps`: gpu.timestamps (gpu_test_support.hpp, openTestGpu).
    explicit FilterDevice(const std::string& pipelines_toml,
                          config::TimestampSource timestamps = config::TimestampSource::Auto)
        : gpu(openTestGpu("auto", timestamps))
    {
        cache = std::make_unique<gpu::ProgramCache>(sharedProgramsDir());
        pipelines = pipelineSet(pipelineConfig(pipelines_toml), *gpu, *cache);
    }

    // Session::open for pipeline `name`, which must exist, on frames of `input`.
    Result<std::unique_ptr<pipeline::Session>> tryOpen(const std::string& name, const framecl_format& input,
                                                       pipeline::SessionOptions options = {})
    {
        auto definition = pipelines.catalog.find(name);
        REQUIRE_MESSAGE(definition, "no pipeline '" << name << "'");
        return pipeline::Session::open(*gpu, definition, input, options);
    }

    std::unique_ptr<pipeline::Session> open(const std::string& name, const framecl_format& input,
                                            pipeline::SessionOptions options = {})
    {
        auto session = tryOpen(name, input, options);
        REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
        return std::move(*session);
    }

    // Why the catalog leaves out pipeline `name` of `pipelines_toml` on this device's
    // plugins (a stage that refuses its parameters for every input format), or "" where
    // it offers it.
    std::string leftOut(const std::string& pipelines_toml, const std::string& name) const
    {
        const auto catalog = pipeline::buildCatalog(pipelineConfig(pipelines_toml), pipelines.registry,
                                                    pipelines.programs);
        const auto found = catalog.left_out.find(name);
        return found == catalog.left_out.end() ? std::string() : found->second;
    }

    // Runs one frame from `in` into `out`, waits for it and reads `out` back.
    pipeline::EnqueuedFrame run(pipeline::Session& session, LaidOutBuffer& in, LaidOutBuffer& out)
    {
        auto frame = session.enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
        REQUIRE_MESSAGE(frame, (frame ? "" : frame.error().message));
        REQUIRE(gpu->queue().finish() == CL_SUCCESS);
        out.readBack();
        return std::move(*frame);
    }
};

// Empty when every byte of `got` is within `tolerance` of `expected` (packed planes of
// `channels` bytes per pixel, `width` pixels per row); else how many differ and where
// the first one is, for the test's message.
inline std::string differingPixels(const std::vector<uint8_t>& got, const std::vector<uint8_t>& expected,
                                   uint32_t width, uint32_t channels, int tolerance = 0)
{
    if (got.size() != expected.size())
        return "sizes differ: " + std::to_string(got.size()) + " bytes, expected " + std::to_string(expected.size());
    size_t count = 0;
    std::string first;
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::abs(int(got[i]) - int(expected[i])) <= tolerance)
            continue;
        if (count++ == 0) {
            const size_t pixel = i / channels;
            first = "(" + std::to_string(pixel % width) + ", " + std::to_string(pixel / width) + ") channel " +
                    std::to_string(i % channels) + ": got " + std::to_string(got[i]) + ", expected " +
                    std::to_string(expected[i]);
        }
    }
    if (count == 0)
        return {};
    return std::to_string(count) + " bytes differ by more than " + std::to_string(tolerance) + "; the first at " + first;
}

} // namespace framecl::test
