// The tuner on the test device (PoCL in CI): which candidates it tries, that every one
// of them computes the same bytes (so whichever wins, frames are right), that choices
// are kept in tuning.json and read back by the next tuner, and that a broken file is
// replaced. Also the session's side: stage choices and the frame-size limit.
#include <fstream>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/read_file.hpp"
#include "filter_test_support.hpp"
#include "pipeline/stage_timing.hpp"
#include "pipeline/tuner.hpp"
#include "reference_sobel.hpp"

using namespace framecl;
using test::LaidOutBuffer;

namespace {

const std::string tuner_pipelines = R"(
[[pipeline]]
name = "sobel-auto"
stages = [ { plugin = "sobel" } ]
[[pipeline]]
name = "sobel-row16"
stages = [ { plugin = "sobel", variant = "row16" } ]
[[pipeline]]
name = "denoise-edges"
stages = [ { plugin = "epsilon", radius = 1 }, { plugin = "sobel" } ]
[[pipeline]]
name = "luma-epsilon"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "epsilon", radius = 1, variant = "wide16" } ]
[[pipeline]]
name = "offset"
stages = [ { plugin = "offset", amount = 3 } ]
[[pipeline]]
name = "upscale"
stages = [ { plugin = "bicubic", width = 4096, height = 4096 } ]
[[pipeline]]
name = "prep-scale"
stages = [ { plugin = "color", op = "nv12_to_abgr" }, { plugin = "bicubic", width = 40, height = 30 } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice opened(tuner_pipelines);
    return opened;
}

const pipeline::PipelineDefinition& pipelineNamed(const std::string& name)
{
    auto definition = device().pipelines.catalog.find(name);
    REQUIRE(definition);
    return *definition;
}

// Time enough to try every candidate on a busy machine: only a tuning that did is kept in
// tuning.json.
constexpr auto whole_tuning = std::chrono::minutes(5);

const std::vector<std::string> sobel_variants = {"pixel", "row16", "block16x2", "aligned16x4", "image"};

nlohmann::json readJson(const std::filesystem::path& file)
{
    auto text = readFile(file);
    REQUIRE(text);
    return nlohmann::json::parse(*text);
}

} // namespace

TEST_CASE("the candidates are the plugin's auto, each variant with the default work group, then with each shape")
{
    const auto& caps = device().gpu->capabilities();
    const pipeline::FrameShape r8{DRM_FORMAT_R8, 64, 48};
    const auto candidates = pipeline::Tuner::candidates(pipelineNamed("sobel-auto").stages[0], r8, caps.max_work_group_size);
    const size_t variants = sobel_variants.size();
    REQUIRE(candidates.size() > variants + 1);
    // The plugin's own choice first: the one to beat.
    CHECK(candidates[0].variant == "auto");
    CHECK(candidates[0].local == std::array<size_t, 2>{0, 0});
    for (size_t i = 0; i < variants; ++i) {
        CHECK(candidates[i + 1].variant == sobel_variants[i]);
        CHECK(candidates[i + 1].local == std::array<size_t, 2>{0, 0});
    }
    for (size_t i = variants + 1; i < candidates.size(); ++i) {
        CAPTURE(i);
        CHECK(std::find(sobel_variants.begin(), sobel_variants.end(), candidates[i].variant) != sobel_variants.end());
        CHECK(candidates[i].local[0] * candidates[i].local[1] <= caps.max_work_group_size);
        CHECK(candidates[i].local[0] * candidates[i].local[1] >= 64);
    }

    // A variant the config names is kept: only the work-group size is tried.
    const auto fixed = pipeline::Tuner::candidates(pipelineNamed("sobel-row16").stages[0], r8, caps.max_work_group_size);
    REQUIRE(fixed.size() > 1);
    for (const auto& candidate : fixed)
        CHECK(candidate.variant.empty());
    // Only 64 work items allowed: the larger shapes are left out.
    for (const auto& candidate : pipeline::Tuner::candidates(pipelineNamed("sobel-row16").stages[0], r8, 64))
        CHECK(candidate.local[0] * std::max<size_t>(candidate.local[1], 1) <= 64);
}

TEST_CASE("every candidate the tuner may choose computes the reference's bytes")
{
    const uint32_t w = 35, h = 21;
    LaidOutBuffer in(*device().gpu, test::paddedLayout({DRM_FORMAT_R8, w, h}, 7), 3);
    const auto expected = reference::sobelPlane(in.rowStart(0, 0), int(w), int(h), int(in.layout.planes[0].stride),
                                           reference::SobelOutput::MagnitudeL1, reference::Border::Replicate, 0);
    const auto& stage = pipelineNamed("sobel-auto").stages[0];
    for (const auto& candidate :
         pipeline::Tuner::candidates(stage, {DRM_FORMAT_R8, w, h}, device().gpu->capabilities().max_work_group_size)) {
        CAPTURE(candidate.variant);
        CAPTURE(candidate.local[0]);
        CAPTURE(candidate.local[1]);
        pipeline::SessionOptions options;
        options.stage_choices = {candidate};
        auto session = device().open("sobel-auto", {DRM_FORMAT_R8, w, h}, options);
        LaidOutBuffer out(*device().gpu, test::paddedLayout({DRM_FORMAT_R8, w, h}, 5), 0);
        device().run(*session, in, out);
        const std::string differences = test::differingPixels(out.plane(0), expected, w, 1);
        CHECK_MESSAGE(differences.empty(), differences);
        CHECK(out.paddingWritten() == 0);
    }
}

TEST_CASE("a candidate's timing stops after its first timed frame over the bound, once it cannot win, or when cancelled")
{
    auto timer = pipeline::StageTimer::open(*device().gpu, pipeline::singleStage(pipelineNamed("sobel-row16"), 0),
                                            {DRM_FORMAT_R8, 64, 48});
    REQUIRE(timer);
    const auto all = timer->time({}, 1, 3);
    REQUIRE(all);
    CHECK(all->gpu_ns.size() == 3);
    const auto under = timer->time({}, 1, 3, {.hopeless_ns = 3600'000'000'000}); // an hour: no frame takes that
    REQUIRE(under);
    CHECK(under->gpu_ns.size() == 3);
    const auto over = timer->time({}, 1, 3, {.hopeless_ns = 1}); // every frame takes more than a nanosecond
    REQUIRE(over);
    REQUIRE(over->gpu_ns.size() == 1);
    CHECK(over->gpu_ns[0] > 1);
    CHECK(over->wall_ns.size() == 1);
    CHECK(over->copy_ns.size() == 1);
    // Two of three frames over the best so far decide a median that cannot beat it.
    const auto beaten = timer->time({}, 1, 3, {.beat_ns = 1});
    REQUIRE(beaten);
    CHECK(beaten->gpu_ns.size() == 2);
    std::atomic<bool> cancelled{true};
    const auto stopped = timer->time({}, 1, 3, {.cancelled = &cancelled});
    REQUIRE_FALSE(stopped);
    CHECK(stopped.error().message == pipeline::cancelled_text);
}

TEST_CASE("with a kernel budget a candidate's frames are cut as a session's are, and go to the GPU a part at a time")
{
    const pipeline::FrameShape large{DRM_FORMAT_R8, 1024, 768};
    const auto stage = pipeline::singleStage(pipelineNamed("sobel-row16"), 0);
    auto whole = pipeline::StageTimer::open(*device().gpu, stage, large);
    REQUIRE(whole);
    const auto untiled = whole->time({}, 0, 1);
    REQUIRE(untiled);
    CHECK(untiled->parts == 1);
    // A budget of a tenth of the whole frame's time: several parts.
    const uint64_t budget_ns = std::max<uint64_t>(untiled->gpu_ns[0] / 10, 1);
    auto cut = pipeline::StageTimer::open(*device().gpu, stage, large, budget_ns);
    REQUIRE(cut);
    const auto tiled = cut->time({}, 0, 1);
    REQUIRE(tiled);
    INFO("a whole frame " << untiled->gpu_ns[0] << " ns, the budget " << budget_ns << " ns");
    CHECK(tiled->parts > 1);
}

TEST_CASE("choices are timed once, kept in tuning.json and read back by the next tuner")
{
    test::TempDir cache;
    const auto& pipeline = pipelineNamed("denoise-edges");
    const pipeline::FrameShape r8{DRM_FORMAT_R8, 64, 48};
    std::vector<pipeline::StageChoice> first;
    {
        pipeline::Tuner tuner(*device().gpu, cache.path(), whole_tuning);
        first = tuner.choose(pipeline, r8);
        REQUIRE(first.size() == 2);
        const auto& epsilon_variants = pipeline.stages[0].plugin->params()[*pipeline::variantParam(
                                                                               pipeline.stages[0].plugin->params())]
                                           .allowed;
        CHECK(std::find(epsilon_variants.begin(), epsilon_variants.end(), first[0].variant) !=
              epsilon_variants.end());
        CHECK((first[1].variant == "auto" ||
               std::find(sobel_variants.begin(), sobel_variants.end(), first[1].variant) != sobel_variants.end()));
        const auto lines = tuner.describe(pipeline);
        REQUIRE(lines.size() == 2);
        CHECK(lines[0].starts_with("stage 1 (epsilon) on R8 64x48: variant " + first[0].variant));
        CHECK(lines[1].starts_with("stage 2 (sobel) on R8 64x48: variant " + first[1].variant));
    }

    // The file holds one entry per stage; a choice written there by hand (8x8 is no
    // shape the tuner tries) comes back as it is: the next tuner reads, it does not time.
    const auto file = cache.path() / "tuning.json";
    nlohmann::json json = readJson(file);
    CHECK(json["format"] == 1);
    REQUIRE(json["choices"].size() == 2);
    for (auto& [key, entry] : json["choices"].items()) {
        CHECK(key.find(device().gpu->capabilities().name) == 0);
        CHECK(key.ends_with("|R8 64x48"));
        entry["local"] = {8, 8};
    }
    std::ofstream(file) << json.dump();
    pipeline::Tuner reader(*device().gpu, cache.path(), whole_tuning);
    const auto read = reader.choose(pipeline, r8);
    REQUIRE(read.size() == 2);
    for (size_t k = 0; k < 2; ++k) {
        CHECK(read[k].variant == first[k].variant);
        CHECK(read[k].local == std::array<size_t, 2>{8, 8});
    }

    // A choice the device cannot run (an unknown variant, a work group over the limit)
    // is tuned anew, not used.
    json = readJson(file);
    for (auto& [key, entry] : json["choices"].items()) {
        entry["variant"] = "warp-drive";
        entry["local"] = {4096, 4096};
    }
    std::ofstream(file) << json.dump();
    const auto retuned = pipeline::Tuner(*device().gpu, cache.path(), whole_tuning).choose(pipeline, r8);
    REQUIRE(retuned.size() == 2);
    CHECK(retuned[0].variant != "warp-drive");
    CHECK(retuned[1].local[0] * std::max<size_t>(retuned[1].local[1], 1) <=
          device().gpu->capabilities().max_work_group_size);

    // Another size is tuned anew and added beside them.
    CHECK(reader.choose(pipeline, {DRM_FORMAT_R8, 32, 16}).size() == 2);
    CHECK(readJson(file)["choices"].size() == 4);
    CHECK(reader.describe(pipeline).size() == 4);
}

TEST_CASE("a run that fuses is timed fused and unfused, the faster kept in tuning.json, and sessions follow it")
{
    test::TempDir cache;
    const auto definition = device().pipelines.catalog.find("luma-epsilon");
    REQUIRE(definition);
    const pipeline::FrameShape abgr{DRM_FORMAT_ABGR8888, 64, 48};
    const auto fusionOf = [&](const std::vector<pipeline::StageChoice>& chosen) {
        pipeline::SessionOptions options;
        options.stage_choices = chosen;
        auto session = pipeline::Session::open(*device().gpu, definition, abgr, options);
        REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
        REQUIRE((*session)->fusion().size() == 1);
        return (*session)->fusion()[0];
    };
    const auto file = cache.path() / "tuning.json";
    const auto fusionEntry = [&](nlohmann::json& json) -> nlohmann::json& {
        for (auto& [key, entry] : json["choices"].items())
            if (key.find("|fusion|color@") != std::string::npos)
                return entry;
        FAIL("no fusion choice in tuning.json");
        throw std::logic_error("unreachable");
    };

    pipeline::Tuner tuner(*device().gpu, cache.path(), whole_tuning);
    const auto chosen = tuner.choose(*definition, abgr);
    REQUIRE(chosen.size() == 2);
    nlohmann::json json = readJson(file);
    const nlohmann::json& entry = fusionEntry(json);
    const bool fused = entry["variant"] == "fused";
    CHECK((fused || entry["variant"] == "unfused"));
    CHECK(chosen[0].fuse == fused);
    // The way kept is the faster of the two, both timed.
    CHECK(entry["gpu_ns"].get<uint64_t>() > 0);
    CHECK(entry["gpu_ns"].get<uint64_t>() <= entry["other_ns"].get<uint64_t>());
    const auto lines = tuner.describe(*definition);
    CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
        return line.starts_with(fmt::format("stages 1-2 (color, epsilon) on ABGR8888 64x48: {}",
                                            fused ? "fused" : "unfused"));
    }));
    const pipeline::FusionNote note = fusionOf(chosen);
    CHECK(note.fused == fused);
    if (!fused)
        CHECK(note.what == "the tuner timed it faster unfused");

    // The answer read back from tuning.json, edited to the other way, is what the next
    // tuner gives without timing, and what its sessions do.
    fusionEntry(json)["variant"] = fused ? "unfused" : "fused";
    std::ofstream(file) << json.dump();
    const auto flipped = pipeline::Tuner(*device().gpu, cache.path(), whole_tuning).choose(*definition, abgr);
    REQUIRE(flipped.size() == 2);
    CHECK(flipped[0].fuse == !fused);
    const pipeline::FusionNote flipped_note = fusionOf(flipped);
    CHECK(flipped_note.fused == !fused);
    if (fused)
        CHECK(flipped_note.what == "the tuner timed it faster unfused");
    else
        CHECK(flipped_note.what.find("with color in its loads") != std::string::npos);
}

TEST_CASE("a run into a stencil's loads is timed with the stencil's other variants that take loads, and may run one")
{
    test::TempDir cache;
    const auto definition = device().pipelines.catalog.find("prep-scale");
    REQUIRE(definition);
    const pipeline::FrameShape nv12{DRM_FORMAT_NV12, 64, 48};
    const auto file = cache.path() / "tuning.json";
    const auto entryWith = [&](nlohmann::json& json, const std::string& part) -> nlohmann::json& {
        for (auto& [key, entry] : json["choices"].items())
            if (key.find(part) != std::string::npos)
                return entry;
        FAIL("no choice for ", part, " in tuning.json");
        throw std::logic_error("unreachable");
    };
    const auto choose = [&] { return pipeline::Tuner(*device().gpu, cache.path(), whole_tuning).choose(*definition, nv12); };

    // bicubic's own choice made strip (image takes no loads, and the run would not fuse),
    // so that the tuner times the run fused with strip and with pixel.
    REQUIRE(choose().size() == 2);
    nlohmann::json json = readJson(file);
    entryWith(json, "|bicubic@")["variant"] = "strip";
    entryWith(json, "|bicubic@")["local"] = {0, 0};
    for (auto it = json["choices"].begin(); it != json["choices"].end();)
        it = it.key().find("|fusion|") != std::string::npos ? json["choices"].erase(it) : std::next(it);
    std::ofstream(file) << json.dump();
    const auto chosen = choose();
    REQUIRE(chosen.size() == 2);
    json = readJson(file);
    nlohmann::json& fusion = entryWith(json, "|fusion|color@");
    CHECK(fusion["gpu_ns"].get<uint64_t>() <= fusion["other_ns"].get<uint64_t>());
    if (fusion.contains("stencil_variant")) {
        CHECK(fusion["variant"] == "fused");
        CHECK(fusion["stencil_variant"] == "pixel");
        CHECK(chosen[1].variant == "pixel");
    } else {
        CHECK(chosen[1].variant == "strip");
    }
    CHECK(chosen[0].fuse == (fusion["variant"] == "fused"));

    // Read back from tuning.json, edited to say the run is fastest fused with pixel: the
    // next tuner gives that without timing, its sessions run bicubic's pixel kernel with
    // the conversion in its loads, and `framecl pipelines` says so.
    fusion["variant"] = "fused";
    fusion["stencil_variant"] = "pixel";
    fusion["stencil_local"] = {0, 0};
    std::ofstream(file) << json.dump();
    pipeline::Tuner reader(*device().gpu, cache.path(), whole_tuning);
    const auto with_pixel = reader.choose(*definition, nv12);
    REQUIRE(with_pixel.size() == 2);
    CHECK(with_pixel[0].fuse);
    CHECK(with_pixel[1].variant == "pixel");
    pipeline::SessionOptions options;
    options.stage_choices = with_pixel;
    auto session = pipeline::Session::open(*device().gpu, definition, nv12, options);
    REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
    REQUIRE((*session)->fusion().size() == 1);
    CHECK((*session)->fusion()[0].what == "bicubic_pixel_abgr with color in its loads");
    const auto lines = reader.describe(*definition);
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
        return line.starts_with("stages 1-2 (color, bicubic) on NV12 64x48: fused, stage 2 as variant pixel, ");
    }));

    // A variant that takes no loads, as an edited file may name, is timed anew.
    fusion["stencil_variant"] = "image";
    std::ofstream(file) << json.dump();
    const auto retimed = choose();
    REQUIRE(retimed.size() == 2);
    CHECK(retimed[1].variant != "image");
    json = readJson(file);
    CHECK(entryWith(json, "|fusion|color@").value("stencil_variant", "pixel") == "pixel");
}

TEST_CASE("a broken tuning.json is ignored and replaced; a stage with one candidate is not tuned")
{
    test::TempDir cache;
    std::ofstream(cache.path() / "tuning.json") << "{ not json";
    pipeline::Tuner tuner(*device().gpu, cache.path(), whole_tuning);
    const auto chosen = tuner.choose(pipelineNamed("sobel-auto"), {DRM_FORMAT_R8, 40, 30});
    REQUIRE(chosen.size() == 1);
    CHECK(!chosen[0].variant.empty());
    CHECK(readJson(cache.path() / "tuning.json")["choices"].size() == 1);

    // offset (a test plugin) has no variants, but its dispatch leaves the work group to
    // the daemon: its shapes are tuned.
    const auto offset = tuner.choose(pipelineNamed("offset"), {DRM_FORMAT_R8, 40, 30});
    REQUIRE(offset.size() == 1);
    CHECK(offset[0].variant.empty());
}

TEST_CASE("a session refuses a variant for a plugin without variants, and frames over the pixel limit")
{
    pipeline::SessionOptions options;
    options.stage_choices = {{"fast", {0, 0}}};
    auto refused = device().tryOpen("offset", {DRM_FORMAT_R8, 16, 16}, options);
    REQUIRE(!refused);
    CHECK(refused.error().message == "stage 1 (offset amount=3): variant 'fast' chosen, but the plugin has no variants");

    pipeline::SessionOptions limited;
    limited.max_frame_pixels = 1920 * 1080;
    auto over = device().tryOpen("upscale", {DRM_FORMAT_R8, 64, 48}, limited);
    REQUIRE(!over);
    CHECK(over.error().message ==
          "stage 1 (bicubic height=4096 width=4096): its output R8 4096x4096 is over limits.max_frame_pixels = 2073600");
}

TEST_CASE("tuning.json keeps at most max_tuning_choices, dropping the least recently used")
{
    test::TempDir cache;
    const auto& offset = pipelineNamed("offset");
    const auto file = cache.path() / "tuning.json";
    pipeline::Tuner(*device().gpu, cache.path(), whole_tuning).choose(offset, {DRM_FORMAT_R8, 40, 30});
    nlohmann::json json = readJson(file);
    REQUIRE(json["choices"].size() == 1);
    const std::string key = json["choices"].begin().key();
    const std::string prefix = key.substr(0, key.rfind('|') + 1);
    const nlohmann::json entry = json["choices"].begin().value();

    // A full file of sizes a client made up, the one it used first the least recent.
    json["choices"] = nlohmann::json::object();
    for (size_t i = 0; i < pipeline::max_tuning_choices; ++i) {
        json["choices"][prefix + "R8 " + std::to_string(i + 1) + "x2"] = entry;
        json["choices"][prefix + "R8 " + std::to_string(i + 1) + "x2"]["last_used"] = 1000 + i;
    }
    std::ofstream(file) << json.dump();

    pipeline::Tuner tuner(*device().gpu, cache.path(), whole_tuning);
    tuner.choose(offset, {DRM_FORMAT_R8, 2, 2}); // used now: the most recent
    tuner.choose(offset, {DRM_FORMAT_R8, 40, 32}); // new: tuned, and the oldest goes
    json = readJson(file);
    CHECK(json["choices"].size() == pipeline::max_tuning_choices);
    CHECK(json["choices"].contains(prefix + "R8 40x32"));
    CHECK(json["choices"].contains(prefix + "R8 2x2"));
    CHECK_FALSE(json["choices"].contains(prefix + "R8 1x2"));
    CHECK(json["choices"].contains(prefix + "R8 3x2"));
}

TEST_CASE("a tuning its budget cut short serves this tuner's sessions but is not written to tuning.json")
{
    test::TempDir cache;
    const auto& pipeline = pipelineNamed("sobel-auto");
    const pipeline::FrameShape r8{DRM_FORMAT_R8, 64, 48};
    // No time at all: the first candidate, the plugin's own choice, is all that is timed.
    pipeline::Tuner tuner(*device().gpu, cache.path(), std::chrono::milliseconds(0));
    const auto chosen = tuner.choose(pipeline, r8);
    REQUIRE(chosen.size() == 1);
    CHECK(chosen[0].variant == "auto");
    CHECK(tuner.choose(pipeline, r8)[0].variant == "auto"); // kept for this framecld: not timed again
    const auto lines = tuner.describe(pipeline);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].ends_with("(the best of the candidates timed within the budget)"));
    CHECK_FALSE(std::filesystem::exists(cache.path() / "tuning.json"));
}

TEST_CASE("a cancelled tuning chooses nothing and keeps nothing")
{
    test::TempDir cache;
    const auto& pipeline = pipelineNamed("sobel-auto");
    pipeline::Tuner tuner(*device().gpu, cache.path());
    std::atomic<bool> cancelled{true};
    const auto chosen = tuner.choose(pipeline, {DRM_FORMAT_R8, 64, 48}, {}, &cancelled);
    REQUIRE(chosen.size() == 1);
    CHECK(chosen[0].variant.empty());
    CHECK(tuner.describe(pipeline).empty());
    CHECK_FALSE(std::filesystem::exists(cache.path() / "tuning.json"));
}
