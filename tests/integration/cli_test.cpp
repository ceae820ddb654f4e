// `framecl process --in-process` on real image files, checked against the CPU
// reference decoded independently with stb_image.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include <doctest/doctest.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include "client-tools/frame_statistics.hpp"
#include "child_process.hpp"
#include "daemon_fixture.hpp"
#include "reference_color.hpp"
#include "reference_epsilon.hpp"
#include "reference_isp.hpp"
#include "reference_sobel.hpp"
#include "temp_dir.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;

namespace {

struct Decoded {
    int width = 0, height = 0;
    std::vector<uint8_t> pixels;
};

Decoded decode(const std::filesystem::path& file, int channels)
{
    Decoded image;
    int file_channels = 0;
    std::unique_ptr<stbi_uc, void (*)(void*)> data(
        stbi_load(file.c_str(), &image.width, &image.height, &file_channels, channels), stbi_image_free);
    REQUIRE_MESSAGE(data, file.string() << ": " << stbi_failure_reason());
    image.pixels.assign(data.get(), data.get() + size_t(image.width) * image.height * channels);
    return image;
}

std::string testConfig(const TempDir& dir)
{
    return "[daemon]\n"
           "kernel_dirs = [\"" + requireEnv("FRAMECL_SOURCE_ROOT") + "/kernels\"]\n"
           "cache_dir = \"" + (dir / "cache").string() + "\"\n"
           "pipeline_dirs = []\n"
           "[[pipeline]]\nname = \"luma\"\n"
           "stages = [ { plugin = \"color\", op = \"abgr_to_y\" } ]\n";
}

} // namespace

TEST_CASE("process --pipeline luma writes the BT.601 luma of a colour PNG")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir));
    const std::string input = requireEnv("FRAMECL_SOURCE_ROOT") + "/tests/data/testcard.png";
    const auto output = dir / "luma.png";
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "process", "--in-process", "--config", config.string(),
                                "--pipeline", "luma", "--in", input, "--out", output.string()},
                               dir.path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);

    const Decoded rgba = decode(input, 4);
    const Decoded luma = decode(output, 1);
    CHECK(luma.width == rgba.width);
    CHECK(luma.height == rgba.height);
    CHECK(luma.pixels == lumaPlane(rgba.pixels));
}

TEST_CASE("process --pipeline copy on several files writes each unchanged into a directory")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir));
    const std::string data = requireEnv("FRAMECL_SOURCE_ROOT") + "/tests/data/";
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "process", "--in-process", "--config", config.string(),
                                "--pipeline", "copy", "--in", data + "testcard.png", data + "waves.png", "--out",
                                (dir / "out").string()},
                               dir.path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(decode(dir / "out" / "testcard.png", 4).pixels == decode(data + "testcard.png", 4).pixels);
    CHECK(decode(dir / "out" / "waves.png", 1).pixels == decode(data + "waves.png", 1).pixels);
}

TEST_CASE("process refuses an input the pipeline cannot take, and says why")
{
    TempDir dir;
    const auto config = dir.write("framecld.toml", testConfig(dir));
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "process", "--in-process", "--config", config.string(),
                                "--pipeline", "luma", "--in", requireEnv("FRAMECL_SOURCE_ROOT") + "/tests/data/waves.png",
                                "--out", (dir / "x.png").string()},
                               dir.path());
    CHECK(run.status.code == 1);
    CHECK(run.err.find("waves.png: stage 1 (color op=abgr_to_y): input must be ABGR8888, got R8") != std::string::npos);
}

TEST_CASE("process --pipeline copy through a running daemon writes the PNG unchanged")
{
    RunningDaemon daemon;
    const std::string input = requireEnv("FRAMECL_SOURCE_ROOT") + "/tests/data/testcard.png";
    const auto output = daemon.dir() / "b.png";
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "--socket", daemon.socket().string(), "process",
                                "--pipeline", "copy", "--in", input, "--out", output.string()},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(decode(output, 4).pixels == decode(input, 4).pixels);
}

TEST_CASE("process --pipeline luma through a running daemon matches the CPU reference")
{
    RunningDaemon daemon("[[pipeline]]\nname = \"luma\"\nstages = [ { plugin = \"color\", op = \"abgr_to_y\" } ]\n");
    const std::string input = requireEnv("FRAMECL_SOURCE_ROOT") + "/tests/data/testcard.png";
    const auto output = daemon.dir() / "luma.png";
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "process", "--socket", daemon.socket().string(),
                                "--pipeline", "luma", "--in", input, "--out", output.string()},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(decode(output, 1).pixels == lumaPlane(decode(input, 4).pixels));
}

TEST_CASE("a RAW10 frame through the shipped camera-isp-rgb comes back as the references chained")
{
    // The pipeline as config/pipelines.d has it: neutral levels, MHC, the identity, sRGB.
    std::ifstream file(requireSourceRoot() / "config/pipelines.d/camera-isp.toml");
    std::stringstream pipelines;
    pipelines << file.rdbuf();
    RunningDaemon daemon(pipelines.str());

    const Decoded photo = decode(requireEnv("FRAMECL_SOURCE_ROOT") + "/tests/data/testcard.png", 4);
    const BayerSamples raw = mosaic(photo.pixels, uint32_t(photo.width), uint32_t(photo.height), "RGGB", 10);
    const size_t row_bytes = packedRowBytes(Packing::Mipi10, raw.width);
    std::vector<uint8_t> packed(row_bytes * raw.height);
    for (uint32_t y = 0; y < raw.height; ++y)
        packRow(raw, y, Packing::Mipi10, &packed[y * row_bytes]);
    const auto input = daemon.dir() / "frame.srggb10p";
    std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(packed.data()), long(packed.size()));

    const auto output = daemon.dir() / "frame.png";
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "process", "--socket", daemon.socket().string(),
                                "--pipeline", "camera-isp-rgb", "--format", "srggb10p", "--size", "320x240", "--in",
                                input.string(), "--out", output.string()},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(decode(output, 4).pixels == shippedCameraIspRgb(raw));
    // The pipeline makes statistics; the CLI prints them.
    const std::string printed = "statistics: " + framecl::cli::statisticsText(statistics(raw, 0, 4095));
    CHECK_MESSAGE(run.out.find(printed) != std::string::npos, run.out);

    // Demosaic, ccm and tone ran as one kernel (docs/architecture.md, "Fusion"), and
    // `framecl pipelines` says so for each pipeline.
    run = runToCompletion({requireEnv("FRAMECL_CLI"), "--socket", daemon.socket().string(), "pipelines"},
                          daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK_MESSAGE(run.out.find("  fusion: stages 2-4 (demosaic, ccm, tone) as one kernel for SRGGB8, SBGGR8") !=
                      std::string::npos,
                  run.out);
    CHECK_MESSAGE(run.out.find("  fusion: stages 2-5 (demosaic, ccm, tone, color) as one kernel for SRGGB8") !=
                      std::string::npos,
                  run.out);
    CHECK(run.out.find("nothing") == std::string::npos); // the built-in copy: one stage
}

TEST_CASE("a first process of a 3264x2448 photo through three stages on a fresh daemon passes the default timeout")
{
    // Empty caches, PoCL's too: the session's first open tunes each stage at this size
    // and calibrates them, some seconds here, more than the CLI's 5 s default. The
    // daemon says what it is doing as each step begins, and each such status starts
    // the CLI's wait again; the CLI prints them. The daemon's own start builds the
    // three plugins' programs from nothing first: over a minute under ASan beside
    // another test (CI), hence its longer wait for READY=1.
    TempDir pocl_cache;
    RunningDaemon daemon("[[pipeline]]\nname = \"edges\"\n"
                         "stages = [ { plugin = \"color\", op = \"abgr_to_y\" }, "
                         "{ plugin = \"epsilon\", radius = 4, threshold = 20 }, "
                         "{ plugin = \"sobel\", output = \"magnitude\", norm = \"l1\" } ]\n",
                         "", {{"POCL_CACHE_DIR", pocl_cache.path().string()}}, std::chrono::seconds(600));
    constexpr int width = 3264, height = 2448;
    std::vector<uint8_t> rgba(size_t(width) * height * 4);
    for (size_t i = 0; i < rgba.size(); ++i)
        rgba[i] = i % 4 == 3 ? 255 : uint8_t((i / 4 % width) * 7 / 5 + (i / 4 / width) * 3 + (i % 4) * 40);
    const auto input = daemon.dir() / "photo.png";
    REQUIRE(stbi_write_png(input.c_str(), width, height, 4, rgba.data(), width * 4) != 0);
    const auto output = daemon.dir() / "edges.png";
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "process", "--socket", daemon.socket().string(),
                                "--pipeline", "edges", "--in", input.string(), "--out", output.string()},
                               daemon.dir().path());
    MESSAGE(run.err);
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(run.err.find("framecld: tuning stage ") != std::string::npos);

    const auto denoised = epsilonPlane(lumaPlane(rgba).data(), width, height, width, {4, 20, Border::Replicate, 0});
    const auto edges = sobelPlane(denoised.data(), width, height, width, SobelOutput::MagnitudeL1, Border::Replicate, 0);
    CHECK(decode(output, 1).pixels == edges);
}
