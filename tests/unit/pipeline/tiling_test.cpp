// The kernel-time budget on the test device (PoCL in CI): sessions whose dispatches are
// cut into tiles with global offsets give the bytes of untiled sessions for every
// plugin and variant; the tile count follows the calibration; a prediction forced wrong
// shows as overruns and is re-planned; on the host's clock, the same from whole frames.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "pipeline/stage_timing.hpp"
#include "pipeline/tile_plan.hpp"
#include "qcom_emulation.hpp"
#include "shared_programs.hpp"

using namespace framecl;
using test::LaidOutBuffer;
using test::paddedLayout;

namespace {

// A size that is a multiple of no work-group size or granule; NV12 needs it even.
constexpr uint32_t odd_width = 641, odd_height = 479;
constexpr uint32_t even_width = 642, even_height = 478;

// A budget with a prediction of two tile targets per row of the frame: every tileable
// dispatch is cut into bands of one row (or one work group's rows), and where it may also
// be cut along X, each band into columns — some thousand tiles, the last of each band
// and column taking the rest.
constexpr uint64_t forced_budget_ns = 1'000'000;
constexpr double forced_ns_per_item = 2 * pipeline::tileTarget(forced_budget_ns) / odd_width;

struct PipelineCase {
    std::string name;
    std::string stage; // the stage's TOML
    uint32_t fourcc;   // of the input
};

const char* const sobel_variants[] = {"pixel", "row16", "block16x2", "aligned16x4"};
const char* const epsilon_variants[] = {"baseline", "packed", "branchless", "half", "wide16", "wide16x2"};
const char* const meanshift_variants[] = {"baseline", "packed", "local"};
const char* const nv12_to_abgr_variants[] = {"block2x2", "block8x2", "block16x2"};

// Every plugin, with each of its variants where they differ in how work items map to
// pixels, and each input format it takes.
std::vector<PipelineCase> pipelineCases()
{
    std::vector<PipelineCase> cases = {
        {"copy-r8", "plugin = \"copy\"", DRM_FORMAT_R8},
        {"copy-nv12", "plugin = \"copy\"", DRM_FORMAT_NV12},
        {"copy-abgr", "plugin = \"copy\"", DRM_FORMAT_ABGR8888},
        {"color-abgr_to_y", "plugin = \"color\", op = \"abgr_to_y\"", DRM_FORMAT_ABGR8888},
        {"color-nv12_to_y", "plugin = \"color\", op = \"nv12_to_y\"", DRM_FORMAT_NV12},
        {"convolve-direct", "plugin = \"convolve\", kernel = [1, 2, 1, 2, 4, 2, 1, 2, 1], kernel_width = 3, "
                            "kernel_height = 3, scale = 0.0625, variant = \"direct\"", DRM_FORMAT_R8},
        {"convolve-row8", "plugin = \"convolve\", kernel = [1, 2, 1, 2, 4, 2, 1, 2, 1], kernel_width = 3, "
                          "kernel_height = 3, scale = 0.0625, variant = \"row8\"", DRM_FORMAT_R8},
        {"convolve-separable", "plugin = \"convolve\", kernel_x = [1, 4, 6, 4, 1], kernel_y = [-1, 0, 1], "
                               "scale = 0.125, delta = 128, variant = \"separable\"", DRM_FORMAT_R8},
        {"convolve-separable8", "plugin = \"convolve\", kernel_x = [1, 4, 6, 4, 1], kernel_y = [-1, 0, 1], "
                                "scale = 0.125, delta = 128, variant = \"separable8\"", DRM_FORMAT_R8},
        {"convolve-block", "plugin = \"convolve\", kernel = [1, 2, 1, 2, 4, 2, 1, 2, 1], kernel_width = 3, "
                           "kernel_height = 3, scale = 0.0625, variant = \"block\"", DRM_FORMAT_R8},
        {"convolve-sepblock", "plugin = \"convolve\", kernel_x = [1, 4, 6, 4, 1], kernel_y = [-1, 0, 1], "
                              "scale = 0.125, delta = 128, variant = \"sepblock\"", DRM_FORMAT_R8},
    };
    for (const char* variant : {"pixel", "strip"})
        for (uint32_t fourcc : {uint32_t(DRM_FORMAT_R8), uint32_t(DRM_FORMAT_ABGR8888)})
            cases.push_back({std::string("bicubic-") + variant + (fourcc == DRM_FORMAT_R8 ? "-r8" : "-abgr"),
                             std::string("plugin = \"bicubic\", width = 963, height = 719, variant = \"") + variant +
                                 "\"",
                             fourcc});
    for (const char* variant : {"direct", "separable", "rows16", "running", "sweep"})
        for (uint32_t fourcc : {uint32_t(DRM_FORMAT_R8), uint32_t(DRM_FORMAT_ABGR8888)})
            cases.push_back({std::string("box-") + variant + (fourcc == DRM_FORMAT_R8 ? "-r8" : "-abgr"),
                             std::string("plugin = \"box\", width = 5, height = 7, border = \"reflect101\", "
                                         "variant = \"") + variant + "\"",
                             fourcc});
    for (const char* variant : nv12_to_abgr_variants)
        cases.push_back({std::string("color-nv12_to_abgr-") + variant,
                         std::string("plugin = \"color\", op = \"nv12_to_abgr\", variant = \"") + variant + "\"",
                         DRM_FORMAT_NV12});
    for (const char* variant : epsilon_variants)
        cases.push_back({std::string("epsilon-") + variant,
                         std::string("plugin = \"epsilon\", radius = 2, variant = \"") + variant + "\"",
                         DRM_FORMAT_R8});
    for (const char* variant : meanshift_variants)
        cases.push_back({std::string("meanshift-") + variant,
                         std::string("plugin = \"meanshift\", sp = 3, sr = 20, variant = \"") + variant + "\"",
                         DRM_FORMAT_ABGR8888});
    for (const char* variant : sobel_variants)
        cases.push_back({std::string("sobel-") + variant,
                         std::string("plugin = \"sobel\", output = \"magnitude\", variant = \"") + variant + "\"",
                         DRM_FORMAT_R8});
    return cases;
}

// The stages of every case as a one-stage pipeline, and a chain that passes
// intermediates between stages (on-chip under the qcom recording).
std::string testPipelines()
{
    std::string toml;
    for (const PipelineCase& c : pipelineCases())
        toml += "[[pipeline]]\nname = \"" + c.name + "\"\nstages = [ { " + c.stage + " } ]\n";
    toml += R"(
[[pipeline]]
name = "chain"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "box", width = 3, height = 5, variant = "separable" },
           { plugin = "sobel", output = "magnitude" }, { plugin = "copy" } ]
)";
    return toml;
}

test::FilterDevice& device()
{
    static test::FilterDevice opened(testPipelines());
    return opened;
}

framecl_format inputOf(uint32_t fourcc)
{
    return fourcc == DRM_FORMAT_NV12 ? framecl_format{fourcc, even_width, even_height}
                                     : framecl_format{fourcc, odd_width, odd_height};
}

pipeline::SessionOptions untiled(gpu::RecordingMode mode)
{
    pipeline::SessionOptions options;
    options.recording = mode;
    return options;
}

pipeline::SessionOptions forcedTiles(gpu::RecordingMode mode)
{
    pipeline::SessionOptions options = untiled(mode);
    options.kernel_budget_ns = forced_budget_ns;
    options.assumed_ns_per_item = forced_ns_per_item;
    return options;
}

// Every byte of the output buffer (its padding too) after one frame of `session` on a
// random padded input with seed `seed`.
std::vector<uint8_t> outputBytes(const gpu::GpuContext& gpu, pipeline::Session& session, uint32_t seed)
{
    LaidOutBuffer in(gpu, paddedLayout(session.input(), 11), seed);
    LaidOutBuffer out(gpu, paddedLayout(session.output(), 5), 0);
    auto frame = session.enqueue({in.mem(), &in.layout}, {out.mem(), &out.layout});
    REQUIRE_MESSAGE(frame, (frame ? "" : frame.error().message));
    REQUIRE(gpu.queue().finish() == CL_SUCCESS);
    out.readBack();
    return out.bytes;
}

// Pipeline `c` gives the same bytes tiled and untiled, in recording modes off and khr.
void checkTiledEqualsUntiled(const PipelineCase& c)
{
    CAPTURE(c.name);
    for (gpu::RecordingMode mode : {gpu::RecordingMode::Off, gpu::RecordingMode::Khr}) {
        CAPTURE(gpu::recordingModeName(mode));
        auto whole = device().open(c.name, inputOf(c.fourcc), untiled(mode));
        auto tiled = device().open(c.name, inputOf(c.fourcc), forcedTiles(mode));
        const auto stats = tiled->budgetStats();
        REQUIRE(stats.size() == 1);
        CHECK(stats[0].tiles >= 3);
        CHECK(outputBytes(*device().gpu, *tiled, 17) == outputBytes(*device().gpu, *whole, 17));
    }
}

void checkPlugin(const std::string& prefix)
{
    size_t checked = 0;
    for (const PipelineCase& c : pipelineCases())
        if (c.name.rfind(prefix, 0) == 0) {
            checkTiledEqualsUntiled(c);
            ++checked;
        }
    CHECK(checked > 0);
}

// The one dispatch of `session`'s one stage: its work items and granules (8 rows, its
// plan leaving the work-group size to the runtime).
constexpr uint64_t sobel_pixel_items = uint64_t(odd_width) * odd_height;
constexpr uint32_t sobel_pixel_granules = (odd_height + 7) / 8;

// Bands of whole granules, as many to a band as fit under what the budget's target
// leaves after each tile's fixed cost (one where none fits). A granule is 8 full rows, so
// it is predicted at 8 rows' cost even where the last one is partial: a frame predicted
// just under 5 targets can need 6 bands. The fixed cost counts: a calibration on a busy
// machine can fit one of a good part of the target (4 tiles where 3 would fit without it,
// under the sanitizers beside another test).
uint32_t expectedTiles(const pipeline::StageBudget& stage, uint64_t budget_ns)
{
    const double granule_ns = double(odd_width) * 8 * stage.ns_per_item;
    const auto fitting =
        uint32_t(pipeline::tileWorkTarget(pipeline::tileTarget(budget_ns), stage.fixed_ns) / granule_ns);
    return fitting == 0 ? sobel_pixel_granules : (sobel_pixel_granules + fitting - 1) / fitting;
}

uint64_t nowNs()
{
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

// The test device emulated as an Adreno with 4 MiB on-chip and recordings of at most
// `recording_capacity` dispatches (0: no limit), and the test pipelines built for it.
struct EmulatedAdreno {
    test::QcomEmulation emulation;
    std::unique_ptr<gpu::GpuContext> gpu;
    gpu::ProgramCache cache{test::sharedProgramsDir()};
    pipeline::PipelineSet pipelines;

    explicit EmulatedAdreno(uint64_t recording_capacity = 0)
    {
        emulation.setRecordableQueueMaxSize(recording_capacity);
        gpu = emulation.openGpu(4 << 20);
        pipelines = test::pipelineSet(test::pipelineConfig(testPipelines()), *gpu, cache);
    }

    // The "chain" pipeline on an odd-sized ABGR8888 input.
    std::unique_ptr<pipeline::Session> openChain(const pipeline::SessionOptions& options)
    {
        auto session = pipeline::Session::open(*gpu, pipelines.catalog.find("chain"),
                                               {DRM_FORMAT_ABGR8888, odd_width, odd_height}, options);
        REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
        return std::move(*session);
    }
};

uint32_t totalTiles(const pipeline::Session& session)
{
    uint32_t tiles = 0;
    for (const auto& stage : session.budgetStats())
        tiles += stage.tiles;
    return tiles;
}

} // namespace

TEST_CASE("tiled and untiled sessions of copy give the same bytes") { checkPlugin("copy-"); }
TEST_CASE("tiled and untiled sessions of bicubic give the same bytes") { checkPlugin("bicubic-"); }
TEST_CASE("tiled and untiled sessions of box give the same bytes") { checkPlugin("box-"); }
TEST_CASE("tiled and untiled sessions of color give the same bytes") { checkPlugin("color-"); }
TEST_CASE("tiled and untiled sessions of convolve give the same bytes") { checkPlugin("convolve-"); }
TEST_CASE("tiled and untiled sessions of epsilon give the same bytes") { checkPlugin("epsilon-"); }
TEST_CASE("tiled and untiled sessions of meanshift give the same bytes") { checkPlugin("meanshift-"); }
TEST_CASE("tiled and untiled sessions of sobel give the same bytes") { checkPlugin("sobel-"); }

TEST_CASE("a mean shift whose bands of one work group are over the target is cut into columns too")
{
    // 120 bands of 4 rows (479 rounded up to the 32x4 work groups), each cut into the
    // same columns: the grid the bytes above were checked with.
    auto tiled = device().open("meanshift-packed", inputOf(DRM_FORMAT_ABGR8888), forcedTiles(gpu::RecordingMode::Off));
    const uint32_t tiles = tiled->budgetStats()[0].tiles;
    CHECK(tiles > 120);
    CHECK(tiles % 120 == 0);
}

TEST_CASE("under the qcom recording, stages over the budget are cut into parts of their own, nothing on-chip across")
{
    // Every tile is predicted over half the target, so each is a part, recorded on its
    // own: no intermediate may stay on-chip, since on-chip contents live for one
    // recording's enqueue (guide §9.1).
    EmulatedAdreno adreno;
    auto whole = adreno.openChain(untiled(gpu::RecordingMode::Off));
    auto tiled = adreno.openChain(forcedTiles(gpu::RecordingMode::Qcom));
    CHECK(tiled->onchipIntermediates() == 0);
    for (const auto& stage : tiled->budgetStats())
        CHECK(stage.tiles >= 3);
    CHECK(outputBytes(*adreno.gpu, *tiled, 23) == outputBytes(*adreno.gpu, *whole, 23));

    const auto& log = adreno.emulation.log();
    CHECK(log.argument_errors.empty());
    CHECK(log.recordings.size() == totalTiles(*tiled));
    for (const auto& recording : log.recordings)
        CHECK(recording.dispatches == 1);
}

TEST_CASE("under the qcom recording, stages predicted together within the budget share a recording and on-chip memory")
{
    EmulatedAdreno adreno;
    auto whole = adreno.openChain(untiled(gpu::RecordingMode::Off));
    pipeline::SessionOptions light = untiled(gpu::RecordingMode::Qcom);
    light.kernel_budget_ns = forced_budget_ns;
    light.assumed_ns_per_item = 1e-6;
    auto chain = adreno.openChain(light);
    CHECK(chain->onchipIntermediates() > 0);
    CHECK(outputBytes(*adreno.gpu, *chain, 23) == outputBytes(*adreno.gpu, *whole, 23));

    const auto& log = adreno.emulation.log();
    CHECK(log.argument_errors.empty());
    REQUIRE(log.recordings.size() == 1);
    CHECK(log.recordings[0].dispatches == totalTiles(*chain));
}

TEST_CASE("a qcom recording's capacity cuts the parts too, and each still gives the bytes")
{
    // An Adreno whose recordings hold at most 2 dispatches: the chain, light enough to run
    // as one part, is recorded in parts of at most 2, cut where no on-chip intermediate
    // is alive.
    constexpr uint64_t capacity = 2;
    EmulatedAdreno adreno(capacity);
    REQUIRE(adreno.gpu->capabilities().recordable_queue_max_size == capacity);
    auto whole = adreno.openChain(untiled(gpu::RecordingMode::Off));
    pipeline::SessionOptions light = untiled(gpu::RecordingMode::Qcom);
    light.kernel_budget_ns = forced_budget_ns;
    light.assumed_ns_per_item = 1e-6;
    auto chain = adreno.openChain(light);
    CHECK(outputBytes(*adreno.gpu, *chain, 29) == outputBytes(*adreno.gpu, *whole, 29));

    const auto& log = adreno.emulation.log();
    CHECK(log.argument_errors.empty());
    CHECK(log.recordings.size() >= 2);
    size_t dispatches = 0;
    for (const auto& recording : log.recordings) {
        CHECK(recording.dispatches <= capacity);
        dispatches += recording.dispatches;
    }
    CHECK(dispatches == totalTiles(*chain));
}

TEST_CASE("with a small budget, the tile count follows the calibration")
{
    // A first session with a budget of 1 ns: cut as finely as the granules allow, single
    // rows where the runtime chooses the work group.
    pipeline::SessionOptions finest = untiled(gpu::RecordingMode::Off);
    finest.kernel_budget_ns = 1;
    auto first = device().open("sobel-pixel", inputOf(DRM_FORMAT_R8), finest);
    const auto calibrated = first->budgetStats();
    REQUIRE(calibrated.size() == 1);
    REQUIRE(calibrated[0].ns_per_item > 0);
    CHECK(calibrated[0].tiles == odd_height);

    // Then a budget of about a quarter of the calibrated time: some five tiles, as many
    // as this session's own calibration asks for.
    pipeline::SessionOptions quarter = finest;
    quarter.kernel_budget_ns = uint64_t(double(sobel_pixel_items) * calibrated[0].ns_per_item / 4);
    auto second = device().open("sobel-pixel", inputOf(DRM_FORMAT_R8), quarter);
    const auto stats = second->budgetStats();
    CAPTURE(stats[0].ns_per_item);
    CAPTURE(stats[0].fixed_ns);
    CHECK(stats[0].tiles == expectedTiles(stats[0], quarter.kernel_budget_ns));
    CHECK(stats[0].tiles > 1);
    CHECK_FALSE(stats[0].estimated);
}

TEST_CASE("a prediction forced far too small shows as overruns and is re-planned into more tiles")
{
    pipeline::SessionOptions options = untiled(gpu::RecordingMode::Off);
    options.kernel_budget_ns = 1'000; // 1 us: far under a 641x479 Sobel, even on a desktop GPU
    options.assumed_ns_per_item = 1e-6;
    auto session = device().open("sobel-pixel", inputOf(DRM_FORMAT_R8), options);
    REQUIRE(session->budgetStats()[0].tiles == 1);

    LaidOutBuffer in(*device().gpu, paddedLayout(session->input(), 11), 5);
    LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), 5), 0);
    // The first frame of a recorded sequence counts, but teaches nothing: it pays for
    // what the driver builds at a first enqueue. The second re-plans.
    for (int frames = 0; frames < 2; ++frames) {
        const uint64_t start = nowNs();
        const pipeline::EnqueuedFrame frame = device().run(*session, in, out);
        session->frameCompleted(frame, nowNs() - start);
        if (frames == 0)
            CHECK(session->budgetStats()[0].tiles == 1);
    }

    const auto stats = session->budgetStats();
    CHECK(stats[0].dispatches_run == 2);
    CHECK(stats[0].overruns == 2);
    CHECK(stats[0].longest_ns > options.kernel_budget_ns);
    CHECK_FALSE(stats[0].estimated);
    CHECK(stats[0].ns_per_item > 2 * *options.assumed_ns_per_item);
    CHECK(stats[0].tiles > 1);

    // The next frame runs the new tiles, each with its event, slice and share of the
    // stage's time, and gives the untiled bytes.
    const std::vector<uint8_t> before = out.bytes;
    LaidOutBuffer again(*device().gpu, paddedLayout(session->output(), 5), 0);
    const pipeline::EnqueuedFrame tiled = device().run(*session, in, again);
    CHECK(again.bytes == before);
    REQUIRE(tiled.events.size() == stats[0].tiles);
    const auto slices = session->dispatchSlices(tiled);
    REQUIRE(slices.size() == stats[0].tiles);
    CHECK(slices[0].name == "sobel_pixel tile 1/" + std::to_string(stats[0].tiles));
    CHECK(slices[0].stage == 0);
    CHECK(slices[0].end_ns >= slices[0].start_ns);
    const auto times = session->stageTimes(tiled);
    REQUIRE(times.size() == 1);
    CHECK(times[0].second == session->gpuNs(tiled));
}

TEST_CASE("under a khr recording, a forced-wrong prediction is corrected from the whole recording's time")
{
    pipeline::SessionOptions options = untiled(gpu::RecordingMode::Khr);
    options.kernel_budget_ns = 1'000;
    options.assumed_ns_per_item = 1e-6;
    auto session = device().open("sobel-pixel", inputOf(DRM_FORMAT_R8), options);

    LaidOutBuffer in(*device().gpu, paddedLayout(session->input(), 11), 5);
    LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), 5), 0);
    for (int frames = 0; frames < 2; ++frames) {
        const uint64_t start = nowNs();
        const pipeline::EnqueuedFrame frame = device().run(*session, in, out);
        REQUIRE(frame.events.size() == 1);
        session->frameCompleted(frame, nowNs() - start);
    }

    const auto stats = session->budgetStats();
    CHECK(stats[0].estimated);
    CHECK(stats[0].dispatches_run == 2);
    CHECK(stats[0].overruns == 2);
    CHECK(stats[0].tiles > 1);
}

TEST_CASE("on the host's clock, a session calibrates, is corrected from whole frames and times no stage apart")
{
    // As on a device whose profiling timestamps are unusable (rusticl 22.3: zeros). Its
    // own context, released before the test case ends rather than at exit.
    test::FilterDevice host(R"(
[[pipeline]]
name = "sobel-pixel"
stages = [ { plugin = "sobel", output = "magnitude", variant = "pixel" } ]
)",
                                   config::TimestampSource::Host);
    REQUIRE_FALSE(host.gpu->clock().device());

    pipeline::SessionOptions calibrated = untiled(gpu::RecordingMode::Off);
    calibrated.kernel_budget_ns = 1'000'000;
    const auto seeded = host.open("sobel-pixel", inputOf(DRM_FORMAT_R8), calibrated)->budgetStats();
    CHECK(seeded[0].ns_per_item > 0);

    pipeline::SessionOptions forced = untiled(gpu::RecordingMode::Off);
    forced.kernel_budget_ns = 1'000;
    forced.assumed_ns_per_item = 1e-6;
    auto session = host.open("sobel-pixel", inputOf(DRM_FORMAT_R8), forced);
    LaidOutBuffer in(*host.gpu, paddedLayout(session->input(), 11), 5);
    LaidOutBuffer out(*host.gpu, paddedLayout(session->output(), 5), 0);
    for (int frames = 0; frames < 2; ++frames) {
        const uint64_t start = nowNs();
        const pipeline::EnqueuedFrame frame = host.run(*session, in, out);
        session->frameCompleted(frame, nowNs() - start);
        CHECK(session->stageTimes(frame).empty());
        CHECK(session->gpuNs(frame) == 0);
        CHECK(session->dispatchSlices(frame).empty());
    }
    const auto stats = session->budgetStats();
    CHECK(stats[0].estimated);
    CHECK(stats[0].overruns == 2);
    CHECK(stats[0].ns_per_item > 2 * *forced.assumed_ns_per_item);
    CHECK(stats[0].tiles > 1);

    // The tuner's and framecl-bench's times: each frame's wall time, no stage apart.
    auto timer = pipeline::StageTimer::open(*host.gpu, host.pipelines.catalog.find("sobel-pixel"),
                                            inputOf(DRM_FORMAT_R8));
    REQUIRE_MESSAGE(timer, (timer ? "" : timer.error().message));
    const auto times = timer->time({}, 0, 3);
    REQUIRE_MESSAGE(times, (times ? "" : times.error().message));
    CHECK(times->gpu_ns == times->wall_ns);
    for (const uint64_t ns : times->gpu_ns)
        CHECK(ns > 0);
    CHECK(times->stage_ns.empty());
}
