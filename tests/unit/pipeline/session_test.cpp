// Sessions on buffers with explicit plane layouts (offsets, strides wider than the
// row), as clients register them.
#include <random>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "pipeline/session.hpp"
#include "reference_color.hpp"
#include "temp_dir.hpp"
#include "test_env.hpp"

using namespace framecl;
using pipeline::FrameShape;

namespace {

const gpu::GpuContext& testGpu()
{
    static const auto gpu = framecl::test::openTestGpu();
    return *gpu;
}

constexpr uint8_t poison = 0xA5;

// A host buffer holding a frame of `layout`, random in the planes' rows and `poison`
// everywhere else, and the device buffer using it.
struct LaidOutBuffer {
    framecl_frame_layout layout;
    std::vector<uint8_t> bytes;
    cl::Buffer mem;

    LaidOutBuffer(const framecl_frame_layout& layout_, size_t size, uint32_t seed) : layout(layout_), bytes(size, poison)
    {
        std::mt19937 random(seed);
        for (auto& byte : bytes)
            byte = seed ? uint8_t(random()) : poison;
        cl_int err = CL_SUCCESS;
        mem = cl::Buffer(testGpu().context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.size(), bytes.data(), &err);
        REQUIRE(err == CL_SUCCESS);
    }

    void readBack()
    {
        REQUIRE(testGpu().queue().enqueueReadBuffer(mem, CL_TRUE, 0, bytes.size(), bytes.data()) == CL_SUCCESS);
    }

    // Row `y` of plane `p`, `row_bytes` long.
    std::vector<uint8_t> row(uint32_t p, uint32_t y, uint32_t row_bytes) const
    {
        const size_t start = layout.planes[p].offset + size_t(y) * layout.planes[p].stride;
        return {bytes.begin() + long(start), bytes.begin() + long(start + row_bytes)};
    }
};

std::unique_ptr<pipeline::Session> openSession(const std::vector<const pipeline::BuiltinStage*>& stages,
                                               const FrameShape& input)
{
    static framecl::test::TempDir cache;
    static gpu::ProgramCache programs(cache.path());
    const std::vector<std::filesystem::path> kernels{framecl::test::requireSourceRoot() / "kernels"};
    auto session = pipeline::Session::open(testGpu(), programs, kernels, "test", stages, input);
    REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
    return std::move(*session);
}

void runFrame(pipeline::Session& session, LaidOutBuffer& in, LaidOutBuffer& out)
{
    auto frame = session.enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
    REQUIRE_MESSAGE(frame, (frame ? "" : frame.error().message));
    out.readBack();
}

} // namespace

TEST_CASE("copy moves each NV12 plane between layouts with different offsets and strides")
{
    const uint32_t w = 34, h = 6;
    // Input: Y stride 40, UV plane 16 bytes after Y with stride 48. Output: strides 36
    // and 38, planes in the other order.
    LaidOutBuffer in({DRM_FORMAT_NV12, w, h, 2, {{0, 40}, {40 * h + 16, 48}}}, 40 * h + 16 + 48 * (h / 2), 7);
    LaidOutBuffer out({DRM_FORMAT_NV12, w, h, 2, {{38 * (h / 2) + 4, 36}, {0, 38}}}, 38 * (h / 2) + 4 + 36 * h, 0);
    auto session = openSession({&pipeline::copyStage()}, {DRM_FORMAT_NV12, w, h});
    runFrame(*session, in, out);

    for (uint32_t y = 0; y < h; ++y)
        CHECK(out.row(0, y, w) == in.row(0, y, w));
    for (uint32_t y = 0; y < h / 2; ++y)
        CHECK(out.row(1, y, w) == in.row(1, y, w));
    // Bytes outside the planes' rows are never written.
    for (uint32_t y = 0; y < h; ++y)
        CHECK(out.bytes[out.layout.planes[0].offset + y * 36 + w] == poison);
    CHECK(out.bytes[38 * (h / 2)] == poison);
}

TEST_CASE("abgr_to_y reads a padded ABGR8888 buffer into a padded R8 buffer")
{
    const uint32_t w = 17, h = 5;
    LaidOutBuffer in({DRM_FORMAT_ABGR8888, w, h, 1, {{12, 4 * w + 8}}}, 12 + (4 * w + 8) * h, 3);
    LaidOutBuffer out({DRM_FORMAT_R8, w, h, 1, {{5, 24}}}, 5 + 24 * h, 0);
    config::Stage stage{"color", {{"op", std::string("abgr_to_y"), {}}}, {}};
    auto session = openSession({*pipeline::findBuiltinStage(stage)}, {DRM_FORMAT_ABGR8888, w, h});
    runFrame(*session, in, out);

    for (uint32_t y = 0; y < h; ++y) {
        CHECK(out.row(0, y, w) == framecl::test::lumaPlane(in.row(0, y, 4 * w)));
        CHECK(out.bytes[5 + y * 24 + w] == poison);
    }
    CHECK(out.bytes[0] == poison);
}

TEST_CASE("a session refuses buffers of another format or size and names both")
{
    auto session = openSession({&pipeline::copyStage()}, {DRM_FORMAT_NV12, 64, 32});
    framecl_frame_layout other{};
    framecl_packed_layout(DRM_FORMAT_NV12, 64, 34, &other);
    auto check = session->checkInput(other);
    REQUIRE_FALSE(check);
    CHECK(check.error().message == "input buffer holds NV12 64x34, the session reads NV12 64x32");
    framecl_packed_layout(DRM_FORMAT_R8, 64, 32, &other);
    CHECK_FALSE(session->checkOutput(other));
}

TEST_CASE("stage times come back one per stage from the profiling events")
{
    const uint32_t w = 16, h = 4;
    framecl_frame_layout packed{};
    const uint64_t size = framecl_packed_layout(DRM_FORMAT_NV12, w, h, &packed);
    LaidOutBuffer in(packed, size, 1), out(packed, size, 0);
    auto session = openSession({&pipeline::copyStage(), &pipeline::copyStage()}, {DRM_FORMAT_NV12, w, h});
    auto frame = session->enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
    REQUIRE(frame);
    REQUIRE(testGpu().queue().finish() == CL_SUCCESS);
    CHECK(frame->events.size() == 4); // two planes, two stages
    CHECK(session->stageTimes(*frame).size() == 2);
    out.readBack();
    CHECK(out.bytes == in.bytes);
}
