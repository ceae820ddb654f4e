// Every filter plugin inside a multi-stage pipeline through a real daemon: frames in
// sealed memfds over the real sockets, the daemon tuning each stage on its first
// session (gpu.tuning is auto), and the output compared with the CPU references of
// tests/support composed stage by stage. `framecl pipelines` then lists the choices.
#include <filesystem>
#include <random>

#include <doctest/doctest.h>

#include "child_process.hpp"
#include "daemon_fixture.hpp"
#include "filter_test_support.hpp"
#include "framecl/client.h"
#include "memory_fds.hpp"
#include "reference_bicubic.hpp"
#include "reference_box.hpp"
#include "reference_color.hpp"
#include "reference_convolve.hpp"
#include "reference_epsilon.hpp"
#include "reference_meanshift.hpp"
#include "reference_sobel.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;

namespace {

// Frames of no multiple of any work-group size; NV12 needs even sides.
constexpr uint32_t width = 76, height = 42;

const std::string pipelines = R"(
[[pipeline]]
name = "edges"
stages = [
  { plugin = "color", op = "nv12_to_y" },
  { plugin = "convolve", kernel_x = [1, 4, 6, 4, 1], kernel_y = [1, 4, 6, 4, 1], scale = 0.00390625 },
  { plugin = "epsilon", radius = 2, threshold = 15 },
  { plugin = "sobel", output = "magnitude", norm = "l1" },
]
[[pipeline]]
name = "scaled"
stages = [
  { plugin = "color", op = "nv12_to_abgr" },
  { plugin = "box", width = 3, height = 3 },
  { plugin = "bicubic", width = 152, height = 84 },
]
[[pipeline]]
name = "segments"
stages = [
  { plugin = "meanshift", sp = 3, sr = 10 },
  { plugin = "color", op = "abgr_to_y" },
]
)";

struct Client {
    framecl_client* handle = nullptr;
    ~Client() { framecl_disconnect(handle); }
};

// One frame of random bytes through pipeline `name`: returns the input and the output,
// packed.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> runFrame(framecl_client* client, const char* name,
                                                               uint32_t fourcc, uint32_t seed)
{
    framecl_frame_layout in_layout{}, out_layout{};
    const uint64_t in_size = framecl_packed_layout(fourcc, width, height, &in_layout);
    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session(client, name, fourcc, width, height, nullptr, 0, &session, &out_layout) == 0,
                    std::string(framecl_last_error(client)));
    const uint64_t out_size = framecl_layout_end(&out_layout);

    std::vector<uint8_t> input(in_size);
    std::mt19937 random(seed);
    for (auto& byte : input)
        byte = uint8_t(random());
    auto in = sealedMemfd("filters-in", off_t(in_size));
    auto out = sealedMemfd("filters-out", off_t(out_size));
    REQUIRE(pwrite(in.get(), input.data(), in_size, 0) == ssize_t(in_size));
    uint32_t in_id = 0, out_id = 0;
    REQUIRE(framecl_register_buffer(client, in.get(), &in_layout, &in_id) == 0);
    REQUIRE(framecl_register_buffer(client, out.get(), &out_layout, &out_id) == 0);
    REQUIRE(framecl_submit(client, session, in_id, out_id, 1) == 0);
    framecl_done done{};
    REQUIRE(framecl_next_done(client, 60000, &done) == 0);
    REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    CHECK(framecl_release_buffer(client, in_id) == 0);
    CHECK(framecl_release_buffer(client, out_id) == 0);
    CHECK(framecl_close_session(client, session) == 0);
    return {input, readMemfd(out.get(), out_size)};
}

std::vector<uint8_t> yPlane(const std::vector<uint8_t>& nv12)
{
    return {nv12.begin(), nv12.begin() + long(width * height)};
}

std::vector<uint8_t> uvPlane(const std::vector<uint8_t>& nv12)
{
    return {nv12.begin() + long(width * height), nv12.end()};
}

} // namespace

TEST_CASE("every filter plugin runs in a multi-stage pipeline through the daemon, equal to the references")
{
    // Time for every candidate on a busy machine: only a whole tuning is written down.
    RunningDaemon daemon("[gpu]\ntuning_budget_ms = 600000\n" + pipelines);
    Client client;
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), "filters-test", 10000};
    REQUIRE_MESSAGE(framecl_connect(&options, &client.handle) == 0, std::string(framecl_last_error(nullptr)));

    { // color, convolve, epsilon and sobel: exact
        const auto [input, output] = runFrame(client.handle, "edges", DRM_FORMAT_NV12, 1);
        ConvolveParams binomial = outerProduct({1, 4, 6, 4, 1}, {1, 4, 6, 4, 1});
        binomial.scale = 1.0 / 256;
        const auto blurred = convolve(yPlane(input), int(width), int(height), binomial);
        const auto denoised = epsilonPlane(blurred.data(), int(width), int(height), int(width), {2, 15, Border::Replicate, 0});
        const auto edges = sobelPlane(denoised.data(), int(width), int(height), int(width), SobelOutput::MagnitudeL1,
                                      Border::Replicate, 0);
        const std::string differences = differingPixels(output, edges, width, 1);
        CHECK_MESSAGE(differences.empty(), differences);
    }
    { // color, box and bicubic: within 1 (bicubic weighs in float)
        const auto [input, output] = runFrame(client.handle, "scaled", DRM_FORMAT_NV12, 2);
        const auto rgba = nv12ToAbgr(yPlane(input), uvPlane(input), width, height, YuvMatrix::Bt601, YuvRange::Limited);
        const auto boxed = boxFilter(rgba, int(width), int(height), 4, {3, 3, Border::Replicate, 0});
        const auto scaled = bicubicScale(boxed, int(width), int(height), 4,
                                         {int(2 * width), int(2 * height), -0.5, Border::Replicate, 0});
        const std::string differences = differingPixels(output, scaled, 2 * width, 4, 1);
        CHECK_MESSAGE(differences.empty(), differences);
    }
    { // meanshift and color: exact
        const auto [input, output] = runFrame(client.handle, "segments", DRM_FORMAT_ABGR8888, 3);
        MeanShiftParams params;
        params.sp = 3;
        params.sr = 10;
        const auto shifted = meanShiftPlane(input.data(), int(width), int(height), int(4 * width), params);
        const std::string differences = differingPixels(output, lumaPlane(shifted.abgr), width, 1);
        CHECK_MESSAGE(differences.empty(), differences);
    }

    // The first session of each stage and size was tuned; the choices are kept beside
    // the program cache and listed with their pipeline.
    CHECK(std::filesystem::exists(daemon.dir().path() / "cache" / "tuning.json"));
    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "--socket", socket, "pipelines"}, daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    MESSAGE(run.out);
    CHECK(run.out.find("tuned: stage ") != std::string::npos);
}
