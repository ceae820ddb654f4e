// A real V4L2 capture driver's frames through framecld: vivid (loaded by run-in-guest)
// streams its test pattern into dma-bufs, framecl-v4l2-capture sends them through the
// guest's framecld, and every output is checked against its capture — the same buffer,
// as the tool read it through the dma-buf between the CPU-access calls: NV12 through
// copy and a colour conversion, and vivid's RAW Bayer through the shipped camera-isp,
// with the statistics it makes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "guest_daemon.hpp"
#include "reference_color.hpp"
#include "reference_isp.hpp"
#include "temp_dir.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;

namespace {

std::vector<uint8_t> readFile(const std::filesystem::path& path)
{
    std::ifstream file(path, std::ios::binary);
    REQUIRE_MESSAGE(file, path.string());
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// framecl-v4l2-capture's JSON report for these arguments after the common ones; it
// must succeed.
nlohmann::json capture(const RunningDaemon& daemon, const std::vector<std::string>& arguments)
{
    std::vector<std::string> command{requireEnv("FRAMECL_V4L2_CAPTURE"), "--device", vividCaptureNode(),
                                     "--socket", daemon.socket().string(), "--size", "320x180", "--json",
                                     "--timeout", std::to_string(guest_request_timeout_ms)};
    command.insert(command.end(), arguments.begin(), arguments.end());
    const auto run = runToCompletion(command, daemon.dir().path(), guest_wait);
    INFO(run.err);
    INFO(run.out);
    REQUIRE(run.status.code == 0);
    return nlohmann::json::parse(run.out);
}

} // namespace

TEST_CASE("vivid's frames through framecl-v4l2-capture: copy verified, nv12_to_abgr against the CPU reference")
{
    const RunningDaemon& daemon = guestDaemon();
    for (const std::string io : {"mmap", "dmabuf"}) {
        CAPTURE(io);
        // --buffers vgem: dmabuf mode needs dma-bufs for the device to fill, and the
        // guest has no DMA-BUF heap.
        const auto copied = capture(daemon, {"--io", io, "--buffers", "vgem", "--pipeline", "copy", "--frames",
                                             "12", "--verify"});
        CHECK(copied["card"].get<std::string>().starts_with("vivid"));
        CHECK(copied["io"] == io);
        CHECK(copied["format"] == "NV12");
        CHECK(copied["ok"] == 12);
        CHECK(copied["verified"] == true);
        CHECK(copied["mismatches"] == 0);

        TempDir files;
        const auto converted = capture(daemon, {"--io", io, "--buffers", "vgem", "--pipeline", "rgb", "--frames", "4",
                                                "--output", "raw", "--save-captures", "--output-dir",
                                                files.path().string()});
        REQUIRE(converted["ok"] == 4);
        const auto size = converted["size"].get<std::string>();
        const uint32_t width = std::stoul(size.substr(0, size.find('x')));
        const uint32_t height = std::stoul(size.substr(size.find('x') + 1));
        for (int frame = 0; frame < 4; ++frame) {
            CAPTURE(frame);
            const auto nv12 = readFile(files.path() / fmt::format("capture-{:06}.raw", frame));
            REQUIRE(nv12.size() == size_t(width) * height * 3 / 2);
            const std::vector<uint8_t> luma(nv12.begin(), nv12.begin() + ptrdiff_t(width) * height);
            const std::vector<uint8_t> chroma(nv12.begin() + ptrdiff_t(width) * height, nv12.end());
            CHECK(readFile(files.path() / fmt::format("frame-{:06}.raw", frame)) ==
                  nv12ToAbgr(luma, chroma, width, height, YuvMatrix::Bt601, YuvRange::Limited));
        }
    }
}

TEST_CASE("vivid's RAW Bayer frames through camera-isp: each output the CPU references chained on its capture")
{
    const RunningDaemon& daemon = guestDaemon();
    for (const std::string io : {"mmap", "dmabuf"}) {
        CAPTURE(io);
        TempDir files;
        const auto isp = capture(daemon, {"--io", io, "--buffers", "vgem", "--format", "srggb10", "--pipeline",
                                          "camera-isp", "--frames", "3", "--output", "raw", "--save-captures",
                                          "--output-dir", files.path().string()});
        REQUIRE(isp["ok"] == 3);
        CHECK(isp["format"] == "SRGGB10");
        CHECK(isp["output_format"] == "NV12");
        const auto size = isp["size"].get<std::string>();
        const uint32_t width = std::stoul(size.substr(0, size.find('x')));
        const uint32_t height = std::stoul(size.substr(size.find('x') + 1));
        for (int frame = 0; frame < 3; ++frame) {
            CAPTURE(frame);
            const auto captured = readFile(files.path() / fmt::format("capture-{:06}.raw", frame));
            REQUIRE(captured.size() == size_t(width) * height * 2);
            const BayerSamples raw =
                unpack(captured.data(), size_t(width) * 2, Packing::Words, "RGGB", 10, width, height);
            const Nv12Planes expected =
                abgrToNv12(shippedCameraIspRgb(raw), width, height, YuvMatrix::Bt709, YuvRange::Limited);
            std::vector<uint8_t> planes = expected.y;
            planes.insert(planes.end(), expected.uv.begin(), expected.uv.end());
            CHECK(readFile(files.path() / fmt::format("frame-{:06}.raw", frame)) == planes);
            if (frame < 2)
                continue;
            // The report's statistics are the last frame's (camera-isp makes them).
            const framecl_statistics reference = statistics(raw, 0, 4095);
            const auto words = [](const auto& array) {
                const auto* first = reinterpret_cast<const uint32_t*>(&array);
                return std::vector<uint32_t>(first, first + sizeof array / sizeof(uint32_t));
            };
            const nlohmann::json& reported = isp["statistics"];
            REQUIRE(reported.is_object());
            CHECK(reported["frames"] == 3);
            CHECK(reported["sums"].get<std::vector<uint32_t>>() == words(reference.sums));
            CHECK(reported["counts"].get<std::vector<uint32_t>>() == words(reference.counts));
            CHECK(reported["histogram"].get<std::vector<uint32_t>>() == words(reference.histogram));
        }
    }
}
