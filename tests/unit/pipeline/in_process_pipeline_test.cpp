// Pipelines run in-process on host frames, checked against the CPU references.
#include <random>

#include <doctest/doctest.h>

#include "gpu/replay.hpp"
#include "gpu_test_support.hpp"
#include "pipeline/in_process_pipeline.hpp"
#include "pipeline_test_support.hpp"
#include "reference_color.hpp"
#include "reference_offset.hpp"
#include "shared_programs.hpp"

using namespace framecl;
using pipeline::HostImage;

namespace {

const gpu::GpuContext& testGpu()
{
    static const auto gpu = framecl::test::openTestGpu();
    return *gpu;
}

const std::string luma_offsets = R"(
[[pipeline]]
name = "luma"
stages = [ { plugin = "color", op = "abgr_to_y" } ]
[[pipeline]]
name = "luma-offsets"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "offset", amount = 40 }, { plugin = "offset", amount = -25 } ]
)";

const pipeline::PipelineSet& testPipelines()
{
    static gpu::ProgramCache cache(framecl::test::sharedProgramsDir());
    static const auto set = framecl::test::pipelineSet(framecl::test::pipelineConfig(luma_offsets), testGpu(), cache);
    return set;
}

HostImage randomImage(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t seed)
{
    std::mt19937 random(seed);
    framecl_frame_layout layout{};
    HostImage image{fourcc, width, height, std::vector<uint8_t>(framecl_packed_layout(fourcc, width, height, &layout))};
    for (auto& byte : image.bytes)
        byte = uint8_t(random());
    return image;
}

Result<HostImage> runOnce(const std::string& name, const HostImage& input,
                          gpu::RecordingMode recording = gpu::RecordingMode::Off)
{
    auto definition = testPipelines().catalog.find(name);
    REQUIRE(definition);
    auto open = pipeline::InProcessPipeline::open(testGpu(), definition, {input.fourcc, input.width, input.height},
                                                  {recording, true, {}, 0});
    if (!open)
        return tl::unexpected(open.error());
    return open->process(input);
}

const std::vector<std::pair<uint32_t, uint32_t>> odd_sizes{{1, 1}, {17, 5}, {641, 479}};

} // namespace

TEST_CASE("the copy pipeline returns every byte unchanged")
{
    for (uint32_t fourcc : {uint32_t(DRM_FORMAT_R8), uint32_t(DRM_FORMAT_ABGR8888)})
        for (const auto& [each_width, each_height] : odd_sizes) {
            const uint32_t width = each_width, height = each_height; // not bindings: clang 14 captures none
            CAPTURE(width);
            CAPTURE(height);
            const HostImage input = randomImage(fourcc, width, height, width * 31 + height);
            auto output = runOnce("copy", input);
            REQUIRE_MESSAGE(output, (output ? "" : output.error().message));
            CHECK(output->fourcc == fourcc);
            CHECK(output->bytes == input.bytes);
        }
}

TEST_CASE("abgr_to_y matches the BT.601 reference on every pixel")
{
    for (const auto& [each_width, each_height] : odd_sizes) {
            const uint32_t width = each_width, height = each_height; // not bindings: clang 14 captures none
        CAPTURE(width);
        CAPTURE(height);
        const HostImage input = randomImage(DRM_FORMAT_ABGR8888, width, height, width + height);
        auto output = runOnce("luma", input);
        REQUIRE_MESSAGE(output, (output ? "" : output.error().message));
        CHECK(output->fourcc == DRM_FORMAT_R8);
        CHECK(output->bytes == framecl::reference::lumaPlane(input.bytes));
    }
}

TEST_CASE("abgr_to_y rounds an exact half up")
{
    // 0.114 x 250 = 28.5 exactly.
    const HostImage input{DRM_FORMAT_ABGR8888, 2, 1, {0, 0, 250, 255, 255, 255, 255, 0}};
    auto output = runOnce("luma", input);
    REQUIRE(output);
    CHECK(output->bytes == std::vector<uint8_t>{29, 255});
}

TEST_CASE("every recording mode gives the reference's bytes through three stages and two intermediates")
{
    for (auto mode : {gpu::RecordingMode::Off, gpu::RecordingMode::Khr}) {
        CAPTURE(gpu::recordingModeName(mode));
        for (const auto& [each_width, each_height] : odd_sizes) {
            const uint32_t width = each_width, height = each_height; // not bindings: clang 14 captures none
            CAPTURE(width);
            CAPTURE(height);
            const HostImage input = randomImage(DRM_FORMAT_ABGR8888, width, height, 7 * width + height);
            auto output = runOnce("luma-offsets", input, mode);
            REQUIRE_MESSAGE(output, (output ? "" : output.error().message));
            const auto expected =
                framecl::test::offsetPlane(framecl::test::offsetPlane(framecl::reference::lumaPlane(input.bytes), 40), -25);
            CHECK(output->bytes == expected);
        }
    }
}

TEST_CASE("a stage given the wrong input format is refused with both formats named")
{
    auto output = runOnce("luma", randomImage(DRM_FORMAT_R8, 4, 4, 1));
    REQUIRE_FALSE(output);
    CHECK(output.error().message.find("ABGR8888") != std::string::npos);
    CHECK(output.error().message.find("R8") != std::string::npos);
}

TEST_CASE("a frame of another size than the pipeline was opened for is refused")
{
    auto open = pipeline::InProcessPipeline::open(testGpu(), testPipelines().catalog.find("copy"),
                                                  {DRM_FORMAT_R8, 8, 8}, {});
    REQUIRE(open);
    auto output = open->process(randomImage(DRM_FORMAT_R8, 8, 9, 2));
    REQUIRE_FALSE(output);
    CHECK(output.error().message == "frame is R8 8x9, the pipeline was opened for R8 8x8");
}
