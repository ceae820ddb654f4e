// Sessions on buffers with explicit plane layouts (offsets, strides wider than the
// row), as clients register them; and the Adreno paths — recordable queues and on-chip
// intermediates — through the emulation of the Qualcomm entry points.
#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "gpu_test_support.hpp"
#include "pipeline/session.hpp"
#include "pipeline_test_support.hpp"
#include "qcom_emulation.hpp"
#include "reference_color.hpp"
#include "reference_offset.hpp"
#include "shared_programs.hpp"

using namespace framecl;
using pipeline::FrameShape;
using test::LaidOutBuffer;

namespace {

const std::string test_pipelines = R"(
[[pipeline]]
name = "luma"
stages = [ { plugin = "color", op = "abgr_to_y" } ]
[[pipeline]]
name = "luma-offsets"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "offset", amount = 40 }, { plugin = "offset", amount = -25 } ]
[[pipeline]]
name = "copy-twice"
fuse = false
stages = [ { plugin = "copy" }, { plugin = "copy" } ]
[[pipeline]]
name = "copy-twice-fused"
stages = [ { plugin = "copy" }, { plugin = "copy" } ]
[[pipeline]]
name = "image-planes"
stages = [ { plugin = "image_planes" } ]
[[pipeline]]
name = "image-planes-twice"
stages = [ { plugin = "image_planes" }, { plugin = "image_planes" } ]
[[pipeline]]
name = "luma-edges-image"
stages = [ { plugin = "color", op = "nv12_to_y" }, { plugin = "sobel", variant = "image" } ]
[[pipeline]]
name = "luma-edges-pixel"
stages = [ { plugin = "color", op = "nv12_to_y" }, { plugin = "sobel", variant = "pixel" } ]
[[pipeline]]
name = "abgr-edges-image"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "sobel", variant = "image" } ]
[[pipeline]]
name = "abgr-edges-pixel"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "sobel", variant = "pixel" } ]
[[pipeline]]
name = "denoise-edges-image"
stages = [ { plugin = "color", op = "nv12_to_y" }, { plugin = "epsilon", radius = 2, threshold = 20, variant = "image" },
           { plugin = "sobel", variant = "image" } ]
[[pipeline]]
name = "denoise-edges-pixel"
stages = [ { plugin = "color", op = "nv12_to_y" }, { plugin = "epsilon", radius = 2, threshold = 20, variant = "baseline" },
           { plugin = "sobel", variant = "pixel" } ]
[[pipeline]]
name = "blur-edges-image"
stages = [ { plugin = "box", width = 5, height = 3, variant = "rows16" }, { plugin = "sobel", variant = "image" } ]
[[pipeline]]
name = "blur-edges-pixel"
stages = [ { plugin = "box", width = 5, height = 3, variant = "rows16" }, { plugin = "sobel", variant = "pixel" } ]
)";

// A device with its pipelines, each kept for the whole test program.
struct Device {
    std::unique_ptr<gpu::GpuContext> gpu;
    std::unique_ptr<gpu::ProgramCache> cache;
    pipeline::PipelineSet pipelines;

    explicit Device(std::unique_ptr<gpu::GpuContext> opened) : gpu(std::move(opened))
    {
        cache = std::make_unique<gpu::ProgramCache>(framecl::test::sharedProgramsDir());
        pipelines = framecl::test::pipelineSet(framecl::test::pipelineConfig(test_pipelines), *gpu, *cache);
    }
};

Device& pocl()
{
    static Device device(framecl::test::openTestGpu());
    return device;
}

std::unique_ptr<pipeline::Session> openSession(Device& device, const std::string& name, const FrameShape& input,
                                               pipeline::SessionOptions options = {})
{
    auto definition = device.pipelines.catalog.find(name);
    REQUIRE(definition);
    auto session = pipeline::Session::open(*device.gpu, definition, input, options);
    REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
    return std::move(*session);
}

void runFrame(Device& device, pipeline::Session& session, LaidOutBuffer& in, LaidOutBuffer& out)
{
    auto frame = session.enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
    REQUIRE_MESSAGE(frame, (frame ? "" : frame.error().message));
    REQUIRE(device.gpu->queue().finish() == CL_SUCCESS);
    out.readBack();
}

framecl_frame_layout packed(uint32_t fourcc, uint32_t w, uint32_t h, uint64_t& size)
{
    framecl_frame_layout layout{};
    size = framecl_packed_layout(fourcc, w, h, &layout);
    return layout;
}

} // namespace

TEST_CASE("copy moves each NV12 plane between layouts with different offsets and strides")
{
    const uint32_t w = 34, h = 6;
    // Input: Y stride 40, UV plane 16 bytes after Y with stride 48. Output: strides 36
    // and 38, planes in the other order.
    LaidOutBuffer in(*pocl().gpu, {DRM_FORMAT_NV12, w, h, 2, {{0, 40}, {40 * h + 16, 48}}}, 40 * h + 16 + 48 * (h / 2), 7);
    LaidOutBuffer out(*pocl().gpu, {DRM_FORMAT_NV12, w, h, 2, {{38 * (h / 2) + 4, 36}, {0, 38}}},
                      38 * (h / 2) + 4 + 36 * h, 0);
    auto session = openSession(pocl(), "copy", {DRM_FORMAT_NV12, w, h});
    runFrame(pocl(), *session, in, out);

    CHECK(out.plane(0) == in.plane(0));
    CHECK(out.plane(1) == in.plane(1));
    for (uint32_t y = 0; y < h; ++y) // bytes outside the planes' rows are never written
        CHECK(out.bytes[out.layout.planes[0].offset + y * 36 + w] == test::poison);
    CHECK(out.bytes[38 * (h / 2)] == test::poison);
}

TEST_CASE("copy takes its aligned 16-byte path when offsets and strides are multiples of 16")
{
    // Rows of 50 bytes: three full 16-byte chunks, copied as aligned uint4, and a tail of
    // 2 bytes copied byte by byte. Every offset and stride is a multiple of 16, the planes
    // in the output in the other order, and the output's strides longer than the input's.
    const uint32_t w = 50, h = 6;
    LaidOutBuffer in(*pocl().gpu, {DRM_FORMAT_NV12, w, h, 2, {{0, 64}, {64 * h + 32, 64}}},
                     64 * h + 32 + 64 * (h / 2), 9);
    LaidOutBuffer out(*pocl().gpu, {DRM_FORMAT_NV12, w, h, 2, {{96 * (h / 2) + 32, 80}, {16, 96}}},
                      96 * (h / 2) + 32 + 80 * h + 16, 0);
    auto session = openSession(pocl(), "copy", {DRM_FORMAT_NV12, w, h});
    runFrame(pocl(), *session, in, out);

    CHECK(out.plane(0) == in.plane(0));
    CHECK(out.plane(1) == in.plane(1));
    // Bytes outside the planes' rows are never written: each row's padding, the gaps.
    CHECK(out.paddingWritten() == 0);
}

// Layouts with rows padded past the pixels and planes at offsets that are no multiple
// of 16, for every format a stage may read as an image.
test::PaddedLayout unalignedLayout(uint32_t fourcc, uint32_t w, uint32_t h)
{
    const uint32_t pixel = fourcc == DRM_FORMAT_ABGR8888 ? 4 : fourcc == DRM_FORMAT_R16 ? 2 : 1;
    const uint32_t stride = w * pixel + 6, offset = 10;
    if (fourcc != DRM_FORMAT_NV12)
        return {{fourcc, w, h, 1, {{offset, stride}}}, offset + size_t(stride) * h};
    const uint32_t uv = offset + stride * h + 3;
    return {{fourcc, w, h, 2, {{offset, stride}, {uv, stride + 2}}}, uv + size_t(stride + 2) * (h / 2)};
}

// Runs a random frame of each format through `pipeline` (image_planes stages, which
// give every plane back unchanged) and checks every plane's bytes and how many planes
// the session copies into images: `copies(fourcc)`.
template <typename Copies>
void checkPlanesThroughImages(const std::string& pipeline, Copies copies)
{
    const uint32_t w = 34, h = 6;
    for (uint32_t fourcc : {DRM_FORMAT_R8, DRM_FORMAT_R16, DRM_FORMAT_ABGR8888, DRM_FORMAT_NV12}) {
        CAPTURE(fourcc);
        const test::PaddedLayout frame = unalignedLayout(fourcc, w, h);
        LaidOutBuffer in(*pocl().gpu, frame, 11);
        LaidOutBuffer out(*pocl().gpu, frame, 0);
        auto session = openSession(pocl(), pipeline, {fourcc, w, h});
        CHECK(session->inputCopies() == copies(fourcc));
        runFrame(pocl(), *session, in, out);
        CHECK(out.plane(0) == in.plane(0));
        if (fourcc == DRM_FORMAT_NV12)
            CHECK(out.plane(1) == in.plane(1));
    }
}

TEST_CASE("a plane a stage reads as an image is copied into one first, exactly, for every format")
{
    checkPlanesThroughImages("image-planes", [](uint32_t fourcc) { return fourcc == DRM_FORMAT_NV12 ? 2u : 1u; });
}

TEST_CASE("a stage whose next reads its single-plane output as an image writes one, and nothing is copied between them")
{
    // The first stage's input planes are copied; between the stages only NV12, which
    // has two planes, goes through a buffer and two more copies.
    checkPlanesThroughImages("image-planes-twice",
                             [](uint32_t fourcc) { return fourcc == DRM_FORMAT_NV12 ? 4u : 1u; });
}

TEST_CASE("real stages write the images the next reads (color's luma ops, epsilon), a buffer is copied into one "
          "(box), and each pipeline equals its buffer path")
{
    struct Case {
        const char* name; // "<name>-image" reads images, "<name>-pixel" buffers
        uint32_t fourcc;
        uint32_t copies;
    };
    const Case cases[] = {{"luma-edges", DRM_FORMAT_NV12, 0},
                          {"abgr-edges", DRM_FORMAT_ABGR8888, 0},
                          {"denoise-edges", DRM_FORMAT_NV12, 0},
                          {"blur-edges", DRM_FORMAT_R8, 1}};
    const uint32_t w = 68, h = 36;
    for (const Case& c : cases) {
        CAPTURE(c.name);
        uint64_t in_size = 0, out_size = 0;
        const auto in_layout = packed(c.fourcc, w, h, in_size);
        const auto out_layout = packed(DRM_FORMAT_R8, w, h, out_size);
        LaidOutBuffer in(*pocl().gpu, in_layout, in_size, 13);
        LaidOutBuffer by_image(*pocl().gpu, out_layout, out_size, 0);
        LaidOutBuffer by_buffer(*pocl().gpu, out_layout, out_size, 0);
        auto image = openSession(pocl(), std::string(c.name) + "-image", {c.fourcc, w, h});
        CHECK(image->inputCopies() == c.copies);
        runFrame(pocl(), *image, in, by_image);
        runFrame(pocl(), *openSession(pocl(), std::string(c.name) + "-pixel", {c.fourcc, w, h}), in, by_buffer);
        CHECK(by_image.bytes == by_buffer.bytes);
    }
}

TEST_CASE("abgr_to_y reads a padded ABGR8888 buffer into a padded R8 buffer")
{
    const uint32_t w = 17, h = 5;
    LaidOutBuffer in(*pocl().gpu, {DRM_FORMAT_ABGR8888, w, h, 1, {{12, 4 * w + 8}}}, 12 + (4 * w + 8) * h, 3);
    LaidOutBuffer out(*pocl().gpu, {DRM_FORMAT_R8, w, h, 1, {{5, 24}}}, 5 + 24 * h, 0);
    auto session = openSession(pocl(), "luma", {DRM_FORMAT_ABGR8888, w, h});
    runFrame(pocl(), *session, in, out);

    for (uint32_t y = 0; y < h; ++y) {
        CHECK(out.row(0, y) == framecl::reference::lumaPlane(in.row(0, y)));
        CHECK(out.bytes[5 + y * 24 + w] == test::poison);
    }
    CHECK(out.bytes[0] == test::poison);
}

TEST_CASE("a session refuses buffers of another format or size and names both")
{
    auto session = openSession(pocl(), "copy", {DRM_FORMAT_NV12, 64, 32});
    uint64_t size = 0;
    auto check = session->checkInput(packed(DRM_FORMAT_NV12, 64, 34, size));
    REQUIRE_FALSE(check);
    CHECK(check.error().message == "input buffer holds NV12 64x34, the session reads NV12 64x32");
    CHECK_FALSE(session->checkOutput(packed(DRM_FORMAT_R8, 64, 32, size)));
}

TEST_CASE("without a recording, stage times come one per stage from the profiling events")
{
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_NV12, 16, 4, size);
    LaidOutBuffer in(*pocl().gpu, layout, size, 1), out(*pocl().gpu, layout, size, 0);
    auto session = openSession(pocl(), "copy-twice", {DRM_FORMAT_NV12, 16, 4}, {gpu::RecordingMode::Off, true, {}, 0});
    auto frame = session->enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
    REQUIRE(frame);
    REQUIRE(pocl().gpu->queue().finish() == CL_SUCCESS);
    CHECK(frame->events.size() == 4); // two planes, two stages
    const auto times = session->stageTimes(*frame);
    REQUIRE(times.size() == 2);
    CHECK(times[0].first == "copy");
    out.readBack();
    CHECK(out.bytes == in.bytes);
}

TEST_CASE("a fused run is one dispatch, timed, traced and reported as its first stage")
{
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_NV12, 16, 4, size);
    LaidOutBuffer in(*pocl().gpu, layout, size, 1), out(*pocl().gpu, layout, size, 0);
    auto session =
        openSession(pocl(), "copy-twice-fused", {DRM_FORMAT_NV12, 16, 4}, {gpu::RecordingMode::Off, true, {}, 0});
    auto frame = session->enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
    REQUIRE(frame);
    REQUIRE(pocl().gpu->queue().finish() == CL_SUCCESS);
    CHECK(frame->events.size() == 1); // both planes, both stages
    const auto times = session->stageTimes(*frame);
    REQUIRE(times.size() == 2);
    CHECK(times[0].second > 0);
    CHECK(times[1].second == 0);
    const auto slices = session->dispatchSlices(*frame);
    REQUIRE(slices.size() == 1);
    CHECK(slices[0].stage == 0);
    CHECK(slices[0].name == "fused_copy_copy");
    const auto budgets = session->budgetStats();
    REQUIRE(budgets.size() == 2);
    CHECK(budgets[0].fusion == "stages 1-2 as fused_copy_copy");
    CHECK(budgets[1].fusion == "stages 1-2 as fused_copy_copy");
    CHECK(budgets[1].tiles == 0);
    out.readBack();
    CHECK(out.bytes == in.bytes);
}

TEST_CASE("the qcom recording is made once per session, when it opens, and replayed once per frame with only the frame's arguments")
{
    framecl::test::QcomEmulation emulation;
    Device adreno(emulation.openGpu(1 << 20));
    const uint32_t w = 19, h = 7;
    uint64_t in_size = 0, out_size = 0;
    const auto in_layout = packed(DRM_FORMAT_ABGR8888, w, h, in_size);
    const auto out_layout = packed(DRM_FORMAT_R8, w, h, out_size);
    auto session = openSession(adreno, "luma-offsets", {DRM_FORMAT_ABGR8888, w, h}, {gpu::RecordingMode::Qcom, true, {}, 0});
    CHECK(session->recording() == gpu::RecordingMode::Qcom);

    std::vector<std::unique_ptr<LaidOutBuffer>> ins, outs;
    for (uint32_t frame = 0; frame < 3; ++frame) {
        ins.push_back(std::make_unique<LaidOutBuffer>(*adreno.gpu, in_layout, in_size, 10 + frame));
        outs.push_back(std::make_unique<LaidOutBuffer>(*adreno.gpu, out_layout, out_size, 0));
        runFrame(adreno, *session, *ins.back(), *outs.back());
        CHECK(outs.back()->bytes ==
              framecl::test::offsetPlane(framecl::test::offsetPlane(framecl::reference::lumaPlane(ins.back()->bytes), 40), -25));
    }

    const auto& log = emulation.log();
    CHECK(log.argument_errors.empty());
    REQUIRE(log.recordings.size() == 1);
    CHECK(log.recordings[0].dispatches == 3);
    // Once when the session opened, on stand-ins for the client's buffers; then once per
    // frame.
    REQUIRE(log.recording_enqueues.size() == 4);
    for (uint32_t frame = 0; frame < 3; ++frame) {
        // The input's buffer, offset and stride on the first dispatch; the output's on
        // the last; nothing else.
        const auto& updates = log.recording_enqueues[frame + 1].updates;
        REQUIRE(updates.size() == 6);
        cl_mem in_mem = ins[frame]->mem(), out_mem = outs[frame]->mem();
        CHECK(updates[0].dispatch_index == 0);
        CHECK(std::memcmp(updates[0].value.data(), &in_mem, sizeof in_mem) == 0);
        CHECK(updates[3].dispatch_index == 2);
        CHECK(std::memcmp(updates[3].value.data(), &out_mem, sizeof out_mem) == 0);
    }
}

TEST_CASE("intermediates go on-chip without overlapping while live and within the reported size")
{
    framecl::test::QcomEmulation emulation;
    constexpr uint64_t onchip = 64 * 1024;
    Device adreno(emulation.openGpu(onchip));
    const uint32_t w = 61, h = 37; // two R8 intermediates of 2257 bytes
    auto session = openSession(adreno, "luma-offsets", {DRM_FORMAT_ABGR8888, w, h}, {gpu::RecordingMode::Qcom, true, {}, 0});
    CHECK(session->onchipIntermediates() == 2);
    CHECK(session->onchipBytes() <= onchip);

    const auto& buffers = emulation.log().onchip_buffers;
    REQUIRE(buffers.size() == 2);
    // Both are live at the middle dispatch (written by one, read by the next): disjoint.
    const bool disjoint = buffers[0].offset + buffers[0].size <= buffers[1].offset ||
                          buffers[1].offset + buffers[1].size <= buffers[0].offset;
    CHECK(disjoint);
    for (const auto& buffer : buffers)
        CHECK(buffer.offset + buffer.size <= onchip);

    uint64_t in_size = 0, out_size = 0;
    const auto in_layout = packed(DRM_FORMAT_ABGR8888, w, h, in_size);
    const auto out_layout = packed(DRM_FORMAT_R8, w, h, out_size);
    LaidOutBuffer in(*adreno.gpu, in_layout, in_size, 5);
    LaidOutBuffer out(*adreno.gpu, out_layout, out_size, 0);
    runFrame(adreno, *session, in, out);
    CHECK(out.bytes == framecl::test::offsetPlane(framecl::test::offsetPlane(framecl::reference::lumaPlane(in.bytes), 40), -25));
}

TEST_CASE("intermediates too large for the on-chip memory fall back to device buffers")
{
    framecl::test::QcomEmulation emulation;
    Device adreno(emulation.openGpu(1024));
    const uint32_t w = 64, h = 64; // 4096-byte intermediates: none fits in 1 KiB
    auto session = openSession(adreno, "luma-offsets", {DRM_FORMAT_ABGR8888, w, h}, {gpu::RecordingMode::Qcom, true, {}, 0});
    CHECK(session->onchipIntermediates() == 0);
    CHECK(emulation.log().onchip_buffers.empty());

    uint64_t in_size = 0, out_size = 0;
    const auto in_layout = packed(DRM_FORMAT_ABGR8888, w, h, in_size);
    const auto out_layout = packed(DRM_FORMAT_R8, w, h, out_size);
    LaidOutBuffer in(*adreno.gpu, in_layout, in_size, 6);
    LaidOutBuffer out(*adreno.gpu, out_layout, out_size, 0);
    runFrame(adreno, *session, in, out);
    CHECK(out.bytes == framecl::test::offsetPlane(framecl::test::offsetPlane(framecl::reference::lumaPlane(in.bytes), 40), -25));
}

TEST_CASE("without the qcom recording, no intermediate goes on-chip")
{
    framecl::test::QcomEmulation emulation;
    Device adreno(emulation.openGpu(1 << 20));
    auto session = openSession(adreno, "luma-offsets", {DRM_FORMAT_ABGR8888, 32, 8}, {gpu::RecordingMode::Off, true, {}, 0});
    CHECK(session->onchipIntermediates() == 0);
}
