#include "pipeline/fusion.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join

#include "protocol/known_formats.hpp"

namespace framecl::pipeline {
namespace {

// A run's kernel takes at most this many stages: its arguments (two planes in and out,
// the size, a parameter block each) stay within FRAMECL_MAX_ARGS.
constexpr size_t max_run = 8;

// The frame size describeFusion asks the plugins about: one every format allows.
constexpr uint32_t probe_side = 64;

// The suffix of kernels/fusion.cl's load and store for `fourcc`; none for a format the
// fused kernels do not handle.
std::optional<std::string> fusedFormat(uint32_t fourcc)
{
    switch (fourcc) {
    case DRM_FORMAT_R8:
        return "r8";
    case DRM_FORMAT_R16:
        return "r16";
    case DRM_FORMAT_ABGR8888:
        return "abgr8888";
    case DRM_FORMAT_ABGR16161616:
        return "abgr16161616";
    case DRM_FORMAT_NV12:
        return "nv12";
    default:
        return std::nullopt;
    }
}

uint32_t planes(const framecl_format& format)
{
    return framecl_format_planes(format.fourcc);
}

// "in0, in0_offset, in0_stride" for plane p of `role`.
std::string planeArgs(const char* role, uint32_t p)
{
    return fmt::format("{0}{1}, {0}{1}_offset, {0}{1}_stride", role, p);
}

// Whether stage k may be part of a run, and its function; or why not, for a stage that
// says it is pointwise.
struct Eligibility {
    std::optional<PointwiseFunction> function;
    std::string why_not;
};

Eligibility eligibility(const PipelineDefinition& pipeline, const StagePlan& stage, size_t k)
{
    const Plugin& plugin = *pipeline.stages[k].plugin;
    auto answer = plugin.pointwise(stage.in, stage.params);
    if (!answer)
        return {std::nullopt, answer.error().message};
    if (!*answer)
        return {};
    if (stage.plan.state_count > 0 || (boundIndices(stage.plan, FRAMECL_ARG_STATISTICS) != 0))
        return {std::nullopt, "its plan keeps state or makes statistics"};
    // A stencil reads its input itself; a pointwise stage's the fused kernel loads.
    if ((!(*answer)->reads_input && !fusedFormat(stage.in.fourcc)) || !fusedFormat(stage.out.fourcc) ||
        planes(stage.in) > 2)
        return {std::nullopt, fmt::format("{} to {} is not a pair of formats a fused kernel loads and stores",
                                          describe(stage.in), describe(stage.out))};
    if (stage.in.width != stage.out.width || stage.in.height != stage.out.height)
        return {std::nullopt, "its output is not the size of its input"};
    if (pipeline.programs && !pipeline.programs->kernelText(plugin, (*answer)->kernel_file))
        return {std::nullopt, "its kernels did not build"};
    return {std::move(*answer), {}};
}

// "fused_ccm_tone": the plugins' names, anything but letters and digits as '_'.
std::string kernelName(const PipelineDefinition& pipeline, size_t first, size_t last)
{
    std::string name = "fused";
    for (size_t k = first; k <= last; ++k) {
        name += '_';
        for (const char c : pipeline.stages[k].plugin->name())
            name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    return name;
}

// Fuses stages first..last, whose functions are `functions`; or says why not.
FusionNote fuseRun(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages, uint32_t first, uint32_t last,
                   const std::vector<PointwiseFunction>& functions)
{
    FusionNote note{first, last, false, {}};
    std::vector<FusedMember> members;
    uint32_t block = 1;
    for (uint32_t k = first; k <= last; ++k) {
        members.push_back({stages[k].in, stages[k].out, functions[k - first]});
        block = std::max(block, functions[k - first].block);
        if (stages[k].in.fourcc == DRM_FORMAT_NV12 || stages[k].out.fourcc == DRM_FORMAT_NV12)
            block = 2;
    }
    const framecl_format& frame = stages[first].in;
    if (frame.width % block != 0 || frame.height % block != 0) {
        note.what = fmt::format("{}x{} is not whole {}x{} blocks", frame.width, frame.height, block, block);
        return note;
    }
    const std::string& options = pipeline.stages[first].plugin->buildOptions();
    for (uint32_t k = first + 1; k <= last; ++k)
        if (pipeline.stages[k].plugin->buildOptions() != options) {
            note.what = "their plugins' build options differ";
            return note;
        }
    auto prelude = pipeline.programs->fusionPrelude();
    if (!prelude) {
        note.what = prelude.error().message;
        return note;
    }
    // Each member's kernel file once, in run order.
    std::string source = *prelude;
    std::set<std::pair<const Plugin*, uint32_t>> included;
    for (uint32_t k = first; k <= last; ++k) {
        const Plugin* plugin = pipeline.stages[k].plugin;
        const uint32_t file = functions[k - first].kernel_file;
        if (included.insert({plugin, file}).second)
            source += *pipeline.programs->kernelText(*plugin, file);
    }
    const std::string name = kernelName(pipeline, first, last);
    source += fusedKernel(members, name, block);
    const FusedProgram& built = pipeline.programs->fused(source, name, options);
    if (!built.program()) {
        note.what = fmt::format("its kernel did not build: {}", built.error);
        return note;
    }
    for (uint32_t k = first; k <= last; ++k) {
        stages[k].run_first = first;
        stages[k].run_last = last;
    }
    stages[first].fused_plan = fusedPlan(members, built.kernel.c_str(), block);
    stages[first].fused_program = built.program();
    note.fused = true;
    note.what = built.kernel;
    return note;
}

// Stages first..last fuse, with these functions.
struct Run {
    uint32_t first = 0;
    uint32_t last = 0;
    std::vector<PointwiseFunction> functions;
};

// The runs of two or more stages of `stages` that may fuse: a stencil or a pointwise
// stage, then pointwise stages. A stage that says it is fusable and cannot be adds its
// reason to `notes`.
std::vector<Run> findRuns(const PipelineDefinition& pipeline, const std::vector<StagePlan>& stages,
                          std::vector<FusionNote>& notes)
{
    std::vector<Eligibility> eligible;
    for (size_t k = 0; k < stages.size(); ++k)
        eligible.push_back(eligibility(pipeline, stages[k], k));
    std::vector<Run> runs;
    for (size_t k = 0; k < stages.size();) {
        if (!eligible[k].function) {
            if (!eligible[k].why_not.empty())
                notes.push_back({uint32_t(k), uint32_t(k), false, eligible[k].why_not});
            ++k;
            continue;
        }
        Run run{uint32_t(k), uint32_t(k), {*eligible[k].function}};
        while (run.last + 1 < stages.size() && eligible[run.last + 1].function &&
               !eligible[run.last + 1].function->reads_input && run.functions.size() < max_run)
            run.functions.push_back(*eligible[++run.last].function);
        k = run.last + 1;
        if (run.last > run.first)
            runs.push_back(std::move(run));
    }
    return runs;
}

// Each stage's formats and plan for `input`, as findRuns reads them; none where a stage
// refuses. Unlike negotiateFormats it makes no parameter blocks (tone's samples a curve
// at 4096 points), since describeFusion runs on the daemon's loop at every Hello.
std::optional<std::vector<StagePlan>> plannedStages(const PipelineDefinition& pipeline, framecl_format input)
{
    std::vector<StagePlan> stages;
    for (size_t k = 0; k < pipeline.stages.size(); ++k) {
        const StageDefinition& definition = pipeline.stages[k];
        auto out = definition.plugin->negotiate(input, definition.params);
        auto plan = out ? definition.plugin->plan(input, definition.params) : tl::unexpected(out.error());
        if (!plan)
            return std::nullopt;
        StagePlan& stage = stages.emplace_back();
        stage.params = definition.params.copy();
        stage.in = input;
        stage.out = *out;
        stage.plan = *plan;
        stage.run_first = stage.run_last = uint32_t(k);
        input = *out;
    }
    return stages;
}

} // namespace

std::string fusedKernel(const std::vector<FusedMember>& members, const std::string& kernel, uint32_t block)
{
    const framecl_format& in = members.front().in;
    const framecl_format& out = members.back().out;
    std::string args;
    for (uint32_t p = 0; p < planes(in); ++p)
        args += fmt::format("__global const uchar* restrict in{0}, uint in{0}_offset, uint in{0}_stride, ", p);
    for (uint32_t p = 0; p < planes(out); ++p)
        args += fmt::format("__global uchar* restrict out{0}, uint out{0}_offset, uint out{0}_stride, ", p);
    args += "uint width, uint height";
    for (size_t s = 0; s < members.size(); ++s)
        args += fmt::format(", __global const uchar* params{}", s);

    std::string body = fmt::format("    const uint x = get_global_id(0) * {0}u, y = get_global_id(1) * {0}u;\n"
                                   "    if (x >= width || y >= height)\n"
                                   "        return;\n"
                                   "    uint4 px[{1}];\n",
                                   block, block * block);
    const auto at = [&](uint32_t i) {
        return std::pair<std::string, std::string>{i % block ? "x + 1" : "x", i / block ? "y + 1" : "y"};
    };
    std::string in_planes = planeArgs("in", 0);
    for (uint32_t p = 1; p < planes(in); ++p)
        in_planes += ", " + planeArgs("in", p);
    // A stencil at the head reads the input itself (plane 0 twice for one plane) and
    // makes the first block; else each pixel is loaded.
    const bool stencil = members.front().function.reads_input;
    if (!stencil) {
        for (uint32_t i = 0; i < block * block; ++i) {
            const auto [px, py] = at(i);
            body += fmt::format("    px[{}] = framecl_load_{}({}, {}, {});\n", i, *fusedFormat(in.fourcc), in_planes,
                                px, py);
        }
    }
    const std::string stencil_planes = planes(in) > 1 ? in_planes : in_planes + ", " + in_planes;
    for (size_t s = 0; s < members.size(); ++s) {
        const PointwiseFunction& function = members[s].function;
        const auto call = [&](uint32_t i, const std::string& px, const std::string& py) {
            const std::string pixels = i == 0 ? "px" : fmt::format("px + {}", i);
            if (s == 0 && stencil)
                return fmt::format("    {}({}, width, height, {}, {}, {}, params{});\n", function.function,
                                   stencil_planes, px, py, pixels, s);
            return fmt::format("    {}({}, {}, {}, params{});\n", function.function, pixels, px, py, s);
        };
        if (function.block == block) {
            body += call(0, "x", "y");
            continue;
        }
        for (uint32_t i = 0; i < block * block; ++i) {
            const auto [px, py] = at(i);
            body += call(i, px, py);
        }
    }
    std::string out_planes = planeArgs("out", 0);
    for (uint32_t p = 1; p < planes(out); ++p)
        out_planes += ", " + planeArgs("out", p);
    if (out.fourcc == DRM_FORMAT_NV12) {
        body += fmt::format("    framecl_store_nv12({}, x, y, px);\n", out_planes);
    } else {
        for (uint32_t i = 0; i < block * block; ++i) {
            const auto [px, py] = at(i);
            body += fmt::format("    framecl_store_{}({}, {}, {}, px[{}]);\n", *fusedFormat(out.fourcc), out_planes, px,
                                py, i);
        }
    }
    return fmt::format("\n#line 1 \"{}\"\n__kernel void {}({})\n{{\n{}}}\n", kernel, kernel, args, body);
}

framecl_plan fusedPlan(const std::vector<FusedMember>& members, const char* kernel, uint32_t block)
{
    const framecl_format& in = members.front().in;
    const framecl_format& out = members.back().out;
    framecl_plan plan{};
    plan.dispatch_count = 1;
    framecl_dispatch& dispatch = plan.dispatches[0];
    dispatch.kernel = kernel;
    dispatch.dims = 2;
    dispatch.global[0] = in.width / block;
    dispatch.global[1] = in.height / block;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    const auto add = [&](framecl_arg_kind kind, uint32_t index, uint32_t value) {
        dispatch.args[dispatch.arg_count++] = {kind, index, value, 0, 0, 0};
    };
    for (uint32_t p = 0; p < planes(in); ++p)
        add(FRAMECL_ARG_INPUT_PLANE, p, 0);
    for (uint32_t p = 0; p < planes(out); ++p)
        add(FRAMECL_ARG_OUTPUT_PLANE, p, 0);
    add(FRAMECL_ARG_UINT, 0, in.width);
    add(FRAMECL_ARG_UINT, 0, in.height);
    for (uint32_t s = 0; s < members.size(); ++s)
        add(FRAMECL_ARG_PARAMS, s, 0);
    return plan;
}

std::vector<FusionNote> fuseStages(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages)
{
    std::vector<FusionNote> notes;
    if (!pipeline.fuse)
        return notes;
    for (const Run& run : findRuns(pipeline, stages, notes))
        notes.push_back(fuseRun(pipeline, stages, run.first, run.last, run.functions));
    std::sort(notes.begin(), notes.end(), [](const FusionNote& a, const FusionNote& b) { return a.first < b.first; });
    return notes;
}

std::vector<std::string> describeFusion(const PipelineDefinition& pipeline)
{
    if (!pipeline.fuse)
        return {"off (fuse = false)"};
    // What fuses, and for which input formats, in the order of the formats.
    std::vector<std::pair<std::string, std::vector<std::string>>> described;
    for (const uint32_t fourcc : protocol::knownFormats()) {
        const auto stages = plannedStages(pipeline, {fourcc, probe_side, probe_side});
        if (!stages)
            continue;
        std::vector<FusionNote> notes;
        std::string text;
        for (const Run& run : findRuns(pipeline, *stages, notes)) {
            std::vector<std::string> names;
            for (uint32_t k = run.first; k <= run.last; ++k)
                names.push_back(pipeline.stages[k].plugin->name());
            text += fmt::format("{}stages {}-{} ({}) as one kernel", text.empty() ? "" : "; ", run.first + 1,
                                run.last + 1, fmt::join(names, ", "));
        }
        if (text.empty())
            continue;
        const auto same = std::find_if(described.begin(), described.end(),
                                       [&](const auto& entry) { return entry.first == text; });
        (same != described.end() ? same->second : described.emplace_back(text, std::vector<std::string>{}).second)
            .push_back(framecl_format_name(fourcc));
    }
    std::vector<std::string> lines;
    for (const auto& [text, formats] : described)
        lines.push_back(fmt::format("{} for {}", text, fmt::join(formats, ", ")));
    return lines;
}

} // namespace framecl::pipeline
