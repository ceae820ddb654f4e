// Fused pipelines give exactly the bytes of the same pipelines unfused
// (docs/architecture.md, "Fusion"): every chain of two pointwise stages the shipped
// plugins make and every chain of three of their filters, from every format they take,
// and chosen chains into epsilon's loads (loads_chains), at a size of odd sides where the
// formats allow one, on buffers packed and aligned and on buffers with padded rows and
// planes at odd offsets. The unfused session runs each plugin's own kernels, so this is
// the check that a plugin's pointwise function and its kernels agree, and that the
// daemon's loads, stores and blocks are right.
#include <map>
#include <set>

#include <linux/videodev2.h>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "filter_test_support.hpp"
#include "pipeline/fusion.hpp"

using namespace framecl;
using pipeline::FrameShape;
using test::LaidOutBuffer;

namespace {

// A stage for the chains: its TOML table, the format it takes and the one it gives,
// whether it is a stencil that takes the stages before it into its loads (loads_chains
// end in one), and the output's size where the stage sets it (a scaler; else the input's).
struct PointwiseStage {
    std::string toml;
    uint32_t in;
    uint32_t out;
    bool loads = false;
    uint32_t out_width = 0;
    uint32_t out_height = 0;
};

const std::vector<PointwiseStage>& pointwiseStages()
{
    static const std::vector<PointwiseStage> stages = {
        {R"({ plugin = "copy" })", DRM_FORMAT_R8, DRM_FORMAT_R8},
        {R"({ plugin = "copy" })", DRM_FORMAT_R16, DRM_FORMAT_R16},
        {R"({ plugin = "copy" })", DRM_FORMAT_ABGR8888, DRM_FORMAT_ABGR8888},
        {R"({ plugin = "copy" })", DRM_FORMAT_ABGR16161616, DRM_FORMAT_ABGR16161616},
        {R"({ plugin = "copy" })", DRM_FORMAT_NV12, DRM_FORMAT_NV12},
        {R"({ plugin = "ccm", matrix = [1.25, -0.125, 0.0625, -0.25, 1.5, -0.25, 0.0, -0.5, 1.75], offsets = [512, -1024, 0] })",
         DRM_FORMAT_ABGR16161616, DRM_FORMAT_ABGR16161616},
        {R"({ plugin = "tone", curve = "srgb" })", DRM_FORMAT_ABGR16161616, DRM_FORMAT_ABGR8888},
        {R"({ plugin = "color", op = "abgr_to_y" })", DRM_FORMAT_ABGR8888, DRM_FORMAT_R8},
        {R"({ plugin = "color", op = "abgr_to_nv12", matrix = "bt709", range = "limited" })", DRM_FORMAT_ABGR8888,
         DRM_FORMAT_NV12},
        {R"({ plugin = "color", op = "abgr_to_nv12", matrix = "bt601", range = "full" })", DRM_FORMAT_ABGR8888,
         DRM_FORMAT_NV12},
        {R"({ plugin = "color", op = "nv12_to_y" })", DRM_FORMAT_NV12, DRM_FORMAT_R8},
        {R"({ plugin = "color", op = "nv12_to_abgr", matrix = "bt601", range = "full" })", DRM_FORMAT_NV12,
         DRM_FORMAT_ABGR8888},
        {R"({ plugin = "color", op = "nv12_to_abgr", matrix = "bt709", range = "limited", variant = "block8x2" })",
         DRM_FORMAT_NV12, DRM_FORMAT_ABGR8888},
        // Stencils, which begin a run: 16-bit words and bytes.
        {R"({ plugin = "demosaic", method = "mhc" })", V4L2_PIX_FMT_SRGGB10, DRM_FORMAT_ABGR16161616},
        {R"({ plugin = "demosaic", method = "bilinear" })", V4L2_PIX_FMT_SGBRG8, DRM_FORMAT_ABGR16161616},
        // Stencils that end a run, the stages before them computed on each pixel they
        // load: each variant that says so, and every border.
        {R"({ plugin = "epsilon", radius = 2, threshold = 12 })", DRM_FORMAT_R8, DRM_FORMAT_R8, true},
        {R"({ plugin = "epsilon", radius = 3, threshold = 40, variant = "baseline", border = "constant", border_value = 9 })",
         DRM_FORMAT_R8, DRM_FORMAT_R8, true},
        {R"({ plugin = "epsilon", radius = 4, threshold = 20, variant = "wide16", border = "reflect101" })",
         DRM_FORMAT_R8, DRM_FORMAT_R8, true},
        // Scalers, each tap computed from the run's input: down and up, each kernel, each
        // border.
        {R"({ plugin = "bicubic", width = 13, height = 9 })", DRM_FORMAT_R8, DRM_FORMAT_R8, true, 13, 9},
        {R"({ plugin = "bicubic", width = 25, height = 11, variant = "pixel", border = "constant", border_value = 7 })",
         DRM_FORMAT_ABGR8888, DRM_FORMAT_ABGR8888, true, 25, 11},
        {R"({ plugin = "bicubic", width = 11, height = 20, a = -0.75, border = "reflect101" })", DRM_FORMAT_ABGR8888,
         DRM_FORMAT_ABGR8888, true, 11, 20},
        {R"({ plugin = "bicubic", width = 30, height = 5, variant = "pixel", border = "reflect101" })", DRM_FORMAT_R8,
         DRM_FORMAT_R8, true, 30, 5},
    };
    return stages;
}

// Every chain of `length` pointwise stages (a stencil heading them, at most) whose
// formats follow on, as indices into pointwiseStages(). Past length 2 only the filters:
// a copy changes nothing a pair with it does not already check, and each chain costs a
// build of its kernel.
std::vector<std::vector<size_t>> chains(size_t length)
{
    std::vector<std::vector<size_t>> made;
    std::vector<size_t> chain;
    const auto& stages = pointwiseStages();
    const auto extend = [&](auto&& self) -> void {
        if (chain.size() == length) {
            const bool copies = std::any_of(chain.begin(), chain.end(),
                                            [&](size_t s) { return stages[s].toml.find("copy") != std::string::npos; });
            if (!(copies && length > 2))
                made.push_back(chain);
            return;
        }
        for (size_t s = 0; s < stages.size(); ++s)
            if (!stages[s].loads && (chain.empty() || stages[chain.back()].out == stages[s].in)) {
                chain.push_back(s);
                self(self);
                chain.pop_back();
            }
    };
    extend(extend);
    return made;
}

// The chains into a stencil's loads, each its own program (the stencil's kernel with the
// producers inlined into every load, the test's costliest builds on PoCL), so chosen
// rather than all: each format a producer reads (R8, ABGR8888, NV12's two planes),
// each epsilon and bicubic kernel that takes loads, each border, and two producers in a
// row.
const std::vector<std::vector<size_t>> loads_chains = {
    {0, 16},     // copy R8 -> epsilon baseline, constant border
    {7, 15},     // abgr_to_y -> epsilon auto (wide16x2), replicate
    {10, 17},    // nv12_to_y -> epsilon wide16, reflect101
    {11, 7, 15}, // nv12_to_abgr -> abgr_to_y -> epsilon auto
    {10, 18},    // nv12_to_y -> bicubic strip R8, down, replicate
    {12, 19},    // nv12_to_abgr block8x2 -> bicubic pixel ABGR8888, up, constant border
    {11, 20},    // nv12_to_abgr -> bicubic strip ABGR8888, reflect101 (camera-prep's chain)
    {0, 21},     // copy R8 -> bicubic pixel R8, reflect101
};

std::vector<std::vector<size_t>> allChains()
{
    auto all = chains(2);
    for (auto& chain : chains(3))
        all.push_back(std::move(chain));
    all.insert(all.end(), loads_chains.begin(), loads_chains.end());
    return all;
}

// Each chain twice: "fused-N" and "unfused-N" (fuse = false).
std::string chainPipelines()
{
    std::string toml;
    const auto all = allChains();
    for (size_t c = 0; c < all.size(); ++c) {
        std::string stages;
        for (size_t s : all[c])
            stages += (stages.empty() ? "" : ", ") + pointwiseStages()[s].toml;
        toml += fmt::format("[[pipeline]]\nname = \"fused-{0}\"\nstages = [ {1} ]\n"
                            "[[pipeline]]\nname = \"unfused-{0}\"\nfuse = false\nstages = [ {1} ]\n",
                            c, stages);
    }
    return toml;
}

struct Device {
    std::unique_ptr<gpu::GpuContext> gpu = test::openTestGpu();
    std::unique_ptr<gpu::ProgramCache> cache = std::make_unique<gpu::ProgramCache>(test::sharedProgramsDir());
    pipeline::PipelineSet pipelines = test::pipelineSet(test::pipelineConfig(chainPipelines()), *gpu, *cache);
};

Device& pocl()
{
    static Device device;
    return device;
}

std::unique_ptr<pipeline::Session> open(const std::string& name, const FrameShape& input)
{
    auto definition = pocl().pipelines.catalog.find(name);
    REQUIRE(definition);
    auto session = pipeline::Session::open(*pocl().gpu, definition, input, {});
    REQUIRE_MESSAGE(session, (session ? "" : session.error().message));
    return std::move(*session);
}

// The output bytes, padding included, of `session` on `input`.
std::vector<uint8_t> run(pipeline::Session& session, LaidOutBuffer& input, const test::PaddedLayout& out_layout)
{
    LaidOutBuffer out(*pocl().gpu, out_layout, 0);
    auto frame = session.enqueue({input.mem(), &input.layout}, {out.mem(), &out.layout});
    REQUIRE_MESSAGE(frame, (frame ? "" : frame.error().message));
    REQUIRE(pocl().gpu->queue().finish() == CL_SUCCESS);
    out.readBack();
    return out.bytes;
}

// The output of `chain` on frames of `input`'s size: its last stage's format, at the size
// it sets or the input's.
FrameShape outputShape(const std::vector<size_t>& chain, const FrameShape& input)
{
    const PointwiseStage& last = pointwiseStages()[chain.back()];
    return {last.out, last.out_width ? last.out_width : input.width, last.out_height ? last.out_height : input.height};
}

std::string describeChain(const std::vector<size_t>& chain)
{
    std::string text;
    for (size_t s : chain)
        text += (text.empty() ? "" : " -> ") + pointwiseStages()[s].toml;
    return text;
}

} // namespace

TEST_CASE("every chain of two pointwise stages, and of three filters, gives the same bytes fused as unfused")
{
    const auto all = allChains();
    std::set<uint32_t> formats_in;
    for (size_t c = 0; c < all.size(); ++c) {
        const auto& chain = all[c];
        const auto& stages = pointwiseStages();
        const bool even = std::any_of(chain.begin(), chain.end(), [&](size_t s) {
            return stages[s].in == DRM_FORMAT_NV12 || stages[s].out == DRM_FORMAT_NV12 ||
                   stages[s].toml.find("demosaic") != std::string::npos;
        });
        // Odd sides where the formats allow them; NV12 and Bayer need even ones, here
        // neither a multiple of 4.
        const FrameShape shape{stages[chain.front()].in, even ? 22u : 17u, even ? 14u : 7u};
        const FrameShape output = outputShape(chain, shape);
        formats_in.insert(shape.fourcc);
        CAPTURE(describeChain(chain));
        auto fused = open(fmt::format("fused-{}", c), shape);
        auto unfused = open(fmt::format("unfused-{}", c), shape);
        REQUIRE(fused->fusion().size() == 1);
        CHECK(fused->fusion()[0].fused);
        CHECK(fused->fusion()[0].first == 0);
        CHECK(fused->fusion()[0].last == chain.size() - 1);
        if (stages[chain.back()].loads)
            CHECK(fused->fusion()[0].what.find("in its loads") != std::string::npos);
        CHECK(unfused->fusion().empty());
        // Packed (every offset and stride aligned), then padded by 3 bytes (none aligned).
        for (const uint32_t padding : {0u, 3u}) {
            CAPTURE(padding);
            LaidOutBuffer input(*pocl().gpu, test::paddedLayout(shape, padding), uint32_t(c + 1));
            const test::PaddedLayout out_layout = test::paddedLayout(output, padding + 2 * (padding > 0));
            const std::vector<uint8_t> want = run(*unfused, input, out_layout);
            const std::vector<uint8_t> got = run(*fused, input, out_layout);
            CHECK(got == want);
        }
    }
    CHECK(formats_in == std::set<uint32_t>{DRM_FORMAT_R8, DRM_FORMAT_R16, DRM_FORMAT_ABGR8888,
                                           DRM_FORMAT_ABGR16161616, DRM_FORMAT_NV12, V4L2_PIX_FMT_SRGGB10,
                                           V4L2_PIX_FMT_SGBRG8});
    MESSAGE(all.size(), " chains");
}

TEST_CASE("a fused run cut into tiles and replayed from a khr recording gives the unfused bytes")
{
    const auto all = allChains();
    // ccm, tone, abgr_to_nv12 bt709 limited; nv12_to_abgr, abgr_to_y into epsilon's loads;
    // nv12_to_abgr into bicubic's.
    const std::vector<std::pair<std::vector<size_t>, FrameShape>> cases = {
        {{5, 6, 8}, {DRM_FORMAT_ABGR16161616, 64, 48}},
        {{11, 7, 15}, {DRM_FORMAT_NV12, 64, 48}},
        {{11, 20}, {DRM_FORMAT_NV12, 64, 48}},
    };
    for (const auto& tiled : cases) {
        // Not a structured binding: clang cannot capture one in CAPTURE's lambda.
        const std::vector<size_t>& chain = tiled.first;
        const FrameShape& shape = tiled.second;
        CAPTURE(describeChain(chain));
        const size_t c = size_t(std::find(all.begin(), all.end(), chain) - all.begin());
        REQUIRE(c < all.size());
        pipeline::SessionOptions options;
        options.recording =
            pocl().gpu->capabilities().command_buffer ? gpu::RecordingMode::Khr : gpu::RecordingMode::Off;
        options.kernel_budget_ns = 1'000'000;
        options.assumed_ns_per_item = 100'000.0; // 10 work items a tile
        auto fused = pipeline::Session::open(*pocl().gpu, pocl().pipelines.catalog.find(fmt::format("fused-{}", c)),
                                             shape, options);
        REQUIRE_MESSAGE(fused, (fused ? "" : fused.error().message));
        REQUIRE((*fused)->fusion().size() == 1);
        CHECK((*fused)->fusion()[0].fused);
        // A GPU's tiles keep it full (pipeline/tile_plan.hpp, fillItems): this frame is one.
        if (pocl().gpu->capabilities().type != gpu::DeviceType::Gpu)
            CHECK((*fused)->budgetStats()[0].tiles > 1);
        auto unfused = open(fmt::format("unfused-{}", c), shape);
        LaidOutBuffer input(*pocl().gpu, test::paddedLayout(shape, 5), 7);
        const test::PaddedLayout out_layout = test::paddedLayout(outputShape(chain, shape), 3);
        CHECK(run(**fused, input, out_layout) == run(*unfused, input, out_layout));
    }
}

TEST_CASE("the fused kernel calls each stage per pixel or per 2x2 block, and stores NV12 a block at a time")
{
    pipeline::PointwiseFunction per_pixel{"tone_pointwise", 0, 1};
    pipeline::PointwiseFunction per_block{"abgr_to_nv12_pointwise", 0, 2};
    const std::string kernel = pipeline::fusedKernel(
        {{{DRM_FORMAT_ABGR16161616, 4, 2}, {DRM_FORMAT_ABGR8888, 4, 2}, per_pixel},
         {{DRM_FORMAT_ABGR8888, 4, 2}, {DRM_FORMAT_NV12, 4, 2}, per_block}},
        "fused_tone_color", 2);
    CHECK(kernel.find("px[3] = framecl_load_abgr16161616(in0, in0_offset, in0_stride, x + 1, y + 1);") !=
          std::string::npos);
    CHECK(kernel.find("tone_pointwise(px + 3, x + 1, y + 1, params0);") != std::string::npos);
    CHECK(kernel.find("abgr_to_nv12_pointwise(px, x, y, params1);") != std::string::npos);
    CHECK(kernel.find("framecl_store_nv12(out0, out0_offset, out0_stride, out1, out1_offset, out1_stride, x, y, px);") !=
          std::string::npos);
    const framecl_plan plan = pipeline::fusedPlan(
        {{{DRM_FORMAT_ABGR16161616, 4, 2}, {DRM_FORMAT_ABGR8888, 4, 2}, per_pixel},
         {{DRM_FORMAT_ABGR8888, 4, 2}, {DRM_FORMAT_NV12, 4, 2}, per_block}},
        "fused_tone_color", 2);
    REQUIRE(plan.dispatch_count == 1);
    CHECK(plan.dispatches[0].global[0] == 2);
    CHECK(plan.dispatches[0].global[1] == 1);
    CHECK(plan.dispatches[0].arg_count == 7); // one input plane, two output planes, the size, two blocks
    CHECK(plan.dispatches[0].args[6].kind == FRAMECL_ARG_PARAMS);
    CHECK(plan.dispatches[0].args[6].index == 1);
}

TEST_CASE("a stencil at a run's head reads the input itself and makes the first block")
{
    pipeline::PointwiseFunction stencil{"demosaic_mhc_words_block", 0, 2, true};
    pipeline::PointwiseFunction per_pixel{"ccm_pointwise", 0, 1};
    const std::string kernel = pipeline::fusedKernel(
        {{{V4L2_PIX_FMT_SRGGB10, 4, 2}, {DRM_FORMAT_ABGR16161616, 4, 2}, stencil},
         {{DRM_FORMAT_ABGR16161616, 4, 2}, {DRM_FORMAT_ABGR16161616, 4, 2}, per_pixel}},
        "fused_demosaic_ccm", 2);
    CHECK(kernel.find("framecl_load") == std::string::npos);
    CHECK(kernel.find("demosaic_mhc_words_block(in0, in0_offset, in0_stride, in0, in0_offset, in0_stride, width, "
                      "height, x, y, px, params0);") != std::string::npos);
    CHECK(kernel.find("ccm_pointwise(px + 3, x + 1, y + 1, params1);") != std::string::npos);
}
