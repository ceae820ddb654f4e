// Parameters changed per frame through a real daemon (docs/protocol.md, "Parameters per
// frame"): an ISP's black level, gains, colour matrix and tone table changed at given
// frames while the frames before them are still queued or running; every output, and
// the statistics each Done brings, equal the CPU references chained with the values its
// Submit left in force. Then the changes
// the daemon refuses: each fails its own frame, names what was wrong, and changes
// nothing for the frames after it.
#include <cmath>
#include <cstring>
#include <random>

#include <doctest/doctest.h>

#include "daemon_fixture.hpp"
#include "filter_test_support.hpp"
#include "framecl/client.hpp"
#include "memory_fds.hpp"
#include "reference_bayer.hpp"
#include "reference_isp.hpp"

using namespace framecl::test;
using namespace framecl::reference;

namespace {

constexpr uint32_t width = 64, height = 48;

const std::string pipelines = R"(
[[pipeline]]
name = "isp"
stages = [
  { plugin = "bayer", black_level = 64, gains = [1.5, 1.0, 1.25], statistics = true },
  { plugin = "demosaic", method = "bilinear" },
  { plugin = "ccm", matrix = [1.2, -0.1, -0.1, -0.2, 1.3, -0.1, 0.0, -0.3, 1.3], offsets = [0, 0, 0] },
  { plugin = "tone", curve = "lut", lut = [0, 0.3, 0.6, 0.85, 1] },
]
[[pipeline]]
name = "blur"
stages = [ { plugin = "box", width = 3, height = 3 } ]
[[pipeline]]
name = "brighter"
stages = [ { plugin = "offset", amount = 10 } ]
)";

// The values of the isp pipeline's stages a frame runs with.
struct IspValues {
    uint32_t black_level = 64;
    uint32_t saturation = 4095;
    double gains[3] = {1.5, 1.0, 1.25};
    double matrix[9] = {1.2, -0.1, -0.1, -0.2, 1.3, -0.1, 0.0, -0.3, 1.3};
    std::vector<double> lut = {0, 0.3, 0.6, 0.85, 1};
};

std::vector<uint8_t> expectedIsp(const BayerSamples& raw, const IspValues& values)
{
    const double no_offsets[3] = {0, 0, 0};
    return toneMap(colourCorrect(demosaic(levels(raw, values.black_level, values.gains), Demosaic::Bilinear),
                                 values.matrix, no_offsets),
                   toneCurvePoints(values.lut));
}

// A frame's buffers, registered with the daemon.
struct FrameBuffers {
    framecl::UniqueFd fd;
    uint32_t id;
};

FrameBuffers registered(framecl::Client& client, const framecl_frame_layout& layout, const char* name)
{
    FrameBuffers buffers{sealedMemfd(name, off_t(framecl_layout_end(&layout))), 0};
    buffers.id = client.registerBuffer(buffers.fd.get(), layout);
    return buffers;
}

} // namespace

TEST_CASE("parameters changed from a frame on: the frames before run with the old values, those after with "
          "the new, exactly")
{
    const std::string kernels = (requireSourceRoot() / "kernels").string();
    const std::string test_plugins = requireEnv("FRAMECL_TEST_PLUGIN_DIR");
    RunningDaemon daemon(pipelines, "plugin_dirs = [\"" + requireEnv("FRAMECL_PLUGIN_DIR") + "\", \"" + test_plugins +
                                        "\"]\nkernel_dirs = [\"" + kernels + "\", \"" +
                                        (requireSourceRoot() / "tests" / "plugins").string() + "\"]");
    auto client = framecl::Client::connect({daemon.socket().string(), "frame-parameters-test", 30000});
    const uint32_t fourcc = framecl_format_from_name("SRGGB10");
    REQUIRE(fourcc != 0);
    const framecl::Session session = client.openSession("isp", fourcc, width, height);

    // Three inputs of random 10-bit samples, in turn.
    framecl_frame_layout in_layout{};
    framecl_packed_layout(fourcc, width, height, &in_layout);
    std::vector<BayerSamples> raws;
    std::vector<FrameBuffers> inputs;
    std::mt19937 random(39);
    for (int i = 0; i < 3; ++i) {
        BayerSamples raw{"RGGB", 10, width, height, std::vector<uint16_t>(size_t(width) * height)};
        for (auto& sample : raw.samples)
            sample = uint16_t(random() % 1024);
        std::vector<uint8_t> bytes(framecl_layout_end(&in_layout));
        for (uint32_t y = 0; y < height; ++y)
            packRow(raw, y, Packing::Words, bytes.data() + size_t(y) * in_layout.planes[0].stride);
        inputs.push_back(registered(client, in_layout, "isp-in"));
        REQUIRE(pwrite(inputs.back().fd.get(), bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()));
        raws.push_back(std::move(raw));
    }

    // Twelve frames submitted before any Done is read; the values change at frames 4, 7
    // and 10, each change adding to those before it.
    IspValues values;
    std::vector<IspValues> in_force;
    std::vector<FrameBuffers> outputs;
    std::vector<double> gamma_table(4096); // the longest table, 32 KiB on the wire
    for (size_t i = 0; i < gamma_table.size(); ++i)
        gamma_table[i] = std::pow(double(i) / 4095.0, 1 / 2.2);
    for (uint64_t frame = 1; frame <= 12; ++frame) {
        std::vector<framecl::FrameParameter> changes;
        if (frame == 4) {
            changes = {{1, "black_level", {100}}, {1, "gains", {2.0, 0.9, 1.7}}};
            values.black_level = 100;
            const double gains[3] = {2.0, 0.9, 1.7};
            std::copy(gains, gains + 3, values.gains);
        } else if (frame == 7) {
            const std::vector<double> matrix = {0.9, 0.1, 0.0, 0.0, 1.0, 0.0, 0.2, -0.2, 1.1};
            changes = {{3, "matrix", matrix}, {4, "lut", gamma_table}};
            std::copy(matrix.begin(), matrix.end(), values.matrix);
            values.lut = gamma_table;
        } else if (frame == 10) {
            changes = {{1, "gains", {1.0, 1.0, 1.0}}, {1, "saturation", {700}}};
            const double gains[3] = {1.0, 1.0, 1.0};
            std::copy(gains, gains + 3, values.gains);
            values.saturation = 700;
        }
        outputs.push_back(registered(client, session.output, "isp-out"));
        client.submit(session.id, inputs[frame % 3].id, outputs.back().id, frame, changes);
        in_force.push_back(values);
    }
    for (int received = 0; received < 12; ++received) {
        const auto done = client.nextDone(60000);
        REQUIRE(done);
        CAPTURE(done->sequence);
        REQUIRE_MESSAGE(done->status == FRAMECL_FRAME_OK, done->error);
        const size_t index = size_t(done->sequence - 1);
        const auto output = readMemfd(outputs[index].fd.get(), framecl_layout_end(&session.output));
        const auto expected = expectedIsp(raws[done->sequence % 3], in_force[index]);
        const std::string differences = differingPixels(output, expected, width, 4);
        CHECK_MESSAGE(differences.empty(), differences);
        const auto statistics = client.doneStatistics();
        REQUIRE(statistics);
        const framecl_statistics reference =
            framecl::reference::statistics(raws[done->sequence % 3], in_force[index].black_level, in_force[index].saturation);
        CHECK(std::memcmp(&*statistics, &reference, sizeof reference) == 0);
    }

    // Refused changes: each fails its frame with the reason and leaves the values.
    const auto refusedWith = [&](uint64_t sequence, std::vector<framecl::FrameParameter> changes,
                                 const std::string& reason) {
        client.submit(session.id, inputs[0].id, outputs[0].id, sequence, changes);
        const auto done = client.nextDone(60000);
        REQUIRE(done);
        CHECK(done->sequence == sequence);
        CHECK(done->status == FRAMECL_FRAME_FAILED);
        CHECK_MESSAGE(std::string(done->error).find(reason) != std::string::npos, done->error);
    };
    refusedWith(20, {{1, "gain", {1.0}}}, "unknown parameter 'gain'; did you mean 'gains'?");
    refusedWith(21, {{1, "black_level", {64.5}}}, "black_level must be an integer, got 64.5");
    refusedWith(22, {{1, "black_level", {5000}}}, "black_level must be between");
    refusedWith(23, {{1, "gains", {1.0, 1.0, 1.0}}, {4, "curve", {1}}},
                "curve is not a number: only numeric parameters change per frame");
    refusedWith(24, {{5, "lut", {0, 1}}}, "stage 5: the pipeline has stages 1 to 4");
    refusedWith(25, {{4, "lut", {0, 2}}}, "lut[1] must be between 0 and 1, got 2");
    refusedWith(26, {{3, "matrix", {}}}, "'matrix' of stage 3 has no value");
    client.submit(session.id, inputs[0].id, outputs[0].id, 27);
    const auto done = client.nextDone(60000);
    REQUIRE(done);
    REQUIRE_MESSAGE(done->status == FRAMECL_FRAME_OK, done->error);
    const auto output = readMemfd(outputs[0].fd.get(), framecl_layout_end(&session.output));
    const std::string differences = differingPixels(output, expectedIsp(raws[0], values), width, 4);
    CHECK_MESSAGE(differences.empty(), differences);

    // A stage whose plugin keeps no parameter block takes no change per frame.
    // A stage whose plugin keeps no parameter block takes no change per frame, nor does a
    // parameter the plan holds (the test plugin `offset` passes `amount` as an argument).
    framecl_frame_layout r8{};
    framecl_packed_layout(DRM_FORMAT_R8, width, height, &r8);
    const FrameBuffers r8_in = registered(client, r8, "r8-in"), r8_out = registered(client, r8, "r8-out");
    const auto refusedIn = [&](const char* pipeline, const framecl::FrameParameter& change, const std::string& reason) {
        const framecl::Session other = client.openSession(pipeline, DRM_FORMAT_R8, width, height);
        client.submit(other.id, r8_in.id, r8_out.id, 1, std::vector<framecl::FrameParameter>{change});
        const auto refused = client.nextDone(60000);
        REQUIRE(refused);
        CHECK(refused->status == FRAMECL_FRAME_FAILED);
        CHECK_MESSAGE(std::string(refused->error).find(reason) != std::string::npos, refused->error);
        CHECK_FALSE(client.doneStatistics()); // a frame that did not run brings none
    };
    refusedIn("blur", {1, "width", {5}}, "box has no parameter block, so no parameter of it changes per frame");
    refusedIn("brighter", {1, "amount", {20}}, "these values change the stage's dispatches or its output");
}
