#include <cstdlib>
#include <random>

#include <doctest/doctest.h>
#include <drm_fourcc.h>

#include "config/config.hpp"
#include "gpu_test_support.hpp"
#include "gpu/program_cache.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/in_process_pipeline.hpp"
#include "reference_color.hpp"
#include "temp_dir.hpp"

using namespace framecl;
using pipeline::FrameShape;
using pipeline::HostImage;

namespace {

// One device for the whole test program: opening PoCL is the slow part.
const gpu::GpuContext& testGpu()
{
    static const auto gpu = framecl::test::openTestGpu();
    return *gpu;
}

std::vector<std::filesystem::path> kernelDirs()
{
    return {std::filesystem::path(std::getenv("FRAMECL_SOURCE_ROOT")) / "kernels"};
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

config::Stage stage(std::string plugin, std::string op = {})
{
    config::Stage result{std::move(plugin), {}, {"test.toml", 3, 1}};
    if (!op.empty())
        result.parameters.push_back({"op", op, {"test.toml", 3, 10}});
    return result;
}

config::Config configWith(std::vector<config::Pipeline> pipelines)
{
    config::Config config;
    config.pipelines = std::move(pipelines);
    return config;
}

Result<HostImage> runOnce(const config::Config& config, const std::string& name, const HostImage& input)
{
    framecl::test::TempDir cache;
    gpu::ProgramCache programs(cache.path());
    auto stages = pipeline::resolvePipeline(config, name);
    if (!stages)
        return tl::unexpected(stages.error());
    auto open = pipeline::InProcessPipeline::open(testGpu(), programs, kernelDirs(), *stages,
                                                  {input.fourcc, input.width, input.height});
    if (!open)
        return tl::unexpected(open.error());
    return open->process(input);
}

const std::vector<std::pair<uint32_t, uint32_t>> odd_sizes{{1, 1}, {17, 5}, {641, 479}};

} // namespace

TEST_CASE("the copy pipeline returns every byte unchanged")
{
    for (uint32_t fourcc : {uint32_t(DRM_FORMAT_R8), uint32_t(DRM_FORMAT_ABGR8888)})
        for (auto [width, height] : odd_sizes) {
            CAPTURE(width);
            CAPTURE(height);
            const HostImage input = randomImage(fourcc, width, height, width * 31 + height);
            auto output = runOnce(config::Config{}, "copy", input);
            REQUIRE_MESSAGE(output, (output ? "" : output.error().message));
            CHECK(output->fourcc == fourcc);
            CHECK(output->bytes == input.bytes);
        }
}

TEST_CASE("abgr_to_y matches the BT.601 reference on every pixel")
{
    const auto config = configWith({{"luma", {stage("color", "abgr_to_y")}, {}}});
    for (auto [width, height] : odd_sizes) {
        CAPTURE(width);
        CAPTURE(height);
        const HostImage input = randomImage(DRM_FORMAT_ABGR8888, width, height, width + height);
        auto output = runOnce(config, "luma", input);
        REQUIRE_MESSAGE(output, (output ? "" : output.error().message));
        CHECK(output->fourcc == DRM_FORMAT_R8);
        CHECK(output->bytes == framecl::test::lumaPlane(input.bytes));
    }
}

TEST_CASE("abgr_to_y rounds an exact half up")
{
    // 0.114 x 250 = 28.5 exactly.
    const auto config = configWith({{"luma", {stage("color", "abgr_to_y")}, {}}});
    const HostImage input{DRM_FORMAT_ABGR8888, 2, 1, {0, 0, 250, 255, 255, 255, 255, 0}};
    auto output = runOnce(config, "luma", input);
    REQUIRE(output);
    CHECK(output->bytes == std::vector<uint8_t>{29, 255});
}

TEST_CASE("stages chain through an intermediate buffer")
{
    const auto config = configWith({{"luma-copy", {stage("color", "abgr_to_y"), stage("copy")}, {}}});
    const HostImage input = randomImage(DRM_FORMAT_ABGR8888, 33, 7, 5);
    auto output = runOnce(config, "luma-copy", input);
    REQUIRE(output);
    CHECK(output->bytes == framecl::test::lumaPlane(input.bytes));
}

TEST_CASE("a stage given the wrong input format is refused with both formats named")
{
    const auto config = configWith({{"luma", {stage("color", "abgr_to_y")}, {}}});
    auto output = runOnce(config, "luma", randomImage(DRM_FORMAT_R8, 4, 4, 1));
    REQUIRE_FALSE(output);
    CHECK(output.error().message.find("ABGR8888") != std::string::npos);
    CHECK(output.error().message.find("R8") != std::string::npos);
}

TEST_CASE("an unknown pipeline is refused with the configured names")
{
    const auto config = configWith({{"luma", {stage("color", "abgr_to_y")}, {}}});
    auto stages = pipeline::resolvePipeline(config, "lumma");
    REQUIRE_FALSE(stages);
    CHECK(stages.error().message == "no pipeline named 'lumma' (configured: copy, luma)");
}

TEST_CASE("a stage this build cannot run names its file and line")
{
    const auto config = configWith({{"edges", {stage("sobel")}, {}}});
    auto stages = pipeline::resolvePipeline(config, "edges");
    REQUIRE_FALSE(stages);
    CHECK(stages.error().message.find("test.toml:3: stage 'sobel' is not available") != std::string::npos);
}

TEST_CASE("a frame of another size than the pipeline was opened for is refused")
{
    framecl::test::TempDir cache;
    gpu::ProgramCache programs(cache.path());
    auto open = pipeline::InProcessPipeline::open(testGpu(), programs, kernelDirs(),
                                                  {&pipeline::copyStage()}, {DRM_FORMAT_R8, 8, 8});
    REQUIRE(open);
    auto output = open->process(randomImage(DRM_FORMAT_R8, 8, 9, 2));
    REQUIRE_FALSE(output);
    CHECK(output.error().message == "frame is R8 8x9, the pipeline was opened for R8 8x8");
}
