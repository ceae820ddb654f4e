#include "pipeline/fusion.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
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

// Whether a stencil's plan may take the stages before it into its loads: every kernel in
// one file that built, no input read as an image.
std::optional<std::string> whyNotLoads(const PipelineDefinition& pipeline, const StagePlan& stage, size_t k)
{
    const Plugin& plugin = *pipeline.stages[k].plugin;
    if (!fusedFormat(stage.in.fourcc))
        return fmt::format("its input {} is not a format a fused kernel loads", describe(stage.in));
    if (boundIndices(stage.plan, FRAMECL_ARG_INPUT_IMAGE) != 0)
        return "it reads its input as an image";
    for (uint32_t d = 0; d < stage.plan.dispatch_count; ++d)
        if (stage.plan.dispatches[d].kernel_file != stage.plan.dispatches[0].kernel_file)
            return "its kernels are in more than one file";
    if (pipeline.programs && !pipeline.programs->kernelText(plugin, stage.plan.dispatches[0].kernel_file))
        return "its kernels did not build";
    return std::nullopt;
}

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
    if ((*answer)->fused_loads) {
        if (auto why = whyNotLoads(pipeline, stage, k))
            return {std::nullopt, *why};
        return {PointwiseFunction{{}, 0, 1, false, true}, {}};
    }
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

// The start of the source of the program of the run from stage `first` whose functions
// are `functions`: the prelude, marked a fused build that wants the plugins' kernels
// `kernels` alone (kernels/prelude.cl, FRAMECL_KERNEL_WANTED), then the kernel file of
// each of its first `files` stages once, in run order. Or why there is none: the prelude
// is missing, or the run's plugins differ in build options.
Result<std::string> runSource(const PipelineDefinition& pipeline, uint32_t first,
                              const std::vector<PointwiseFunction>& functions, uint32_t files,
                              const std::set<std::string>& kernels)
{
    for (uint32_t k = first + 1; k < first + functions.size(); ++k)
        if (pipeline.stages[k].plugin->buildOptions() != pipeline.stages[first].plugin->buildOptions())
            return fail("their plugins' build options differ");
    auto source = pipeline.programs->fusionPrelude();
    if (!source)
        return source;
    *source += "#undef FRAMECL_FUSED_BUILD\n#define FRAMECL_FUSED_BUILD 1\n";
    for (const std::string& kernel : kernels)
        *source += fmt::format("#define FRAMECL_FUSED_KERNEL_{} 1\n", kernel);
    std::set<std::pair<const Plugin*, uint32_t>> included;
    for (uint32_t k = first; k < first + files; ++k) {
        const Plugin* plugin = pipeline.stages[k].plugin;
        const uint32_t file = functions[k - first].kernel_file;
        if (included.insert({plugin, file}).second)
            *source += *pipeline.programs->kernelText(*plugin, file);
    }
    return source;
}

// Builds kernel `kernel` of `source` for the run note.first..note.last and makes it the
// run, its first stage running the plan `plan` gives for the built program; or says in
// `note` why not.
const FusedProgram* buildRun(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages, FusionNote& note,
                             const std::string& source, const std::string& kernel,
                             const std::function<framecl_plan(const FusedProgram&)>& plan)
{
    const FusedProgram& built =
        pipeline.programs->fused(source, kernel, pipeline.stages[note.first].plugin->buildOptions());
    if (!built.program()) {
        note.what = fmt::format("its kernel did not build: {}", built.error);
        return nullptr;
    }
    for (uint32_t k = note.first; k <= note.last; ++k) {
        stages[k].run_first = note.first;
        stages[k].run_last = note.last;
    }
    stages[note.first].fused_plan = plan(built);
    stages[note.first].fused_program = built.program();
    note.fused = true;
    return &built;
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
    auto source = runSource(pipeline, first, functions, last - first + 1, {});
    if (!source) {
        note.what = source.error().message;
        return note;
    }
    const std::string name = kernelName(pipeline, first, last);
    *source += fusedKernel(members, name, block);
    if (const FusedProgram* built = buildRun(pipeline, stages, note, *source, name, [&](const FusedProgram& program) {
            return fusedPlan(members, program.kernel.c_str(), block);
        }))
        note.what = built->kernel;
    return note;
}

// The arguments a stencil's kernels take in a loads-fused program (plugin.h,
// fused_loads), as parameters and as the arguments handed on: the run's second input
// plane where it has one, then the parameter block of each of the `count` stages before
// the stencil.
std::pair<std::string, std::string> fusedLoadArgs(uint32_t input_planes, uint32_t count)
{
    std::string params, args;
    if (input_planes > 1) {
        params += ", __global const uchar* fused_in1, uint fused_in1_offset, uint fused_in1_stride";
        args += ", fused_in1, fused_in1_offset, fused_in1_stride";
    }
    for (uint32_t s = 0; s < count; ++s) {
        params += fmt::format(", __global const uchar* fused_params{}", s);
        args += fmt::format(", fused_params{}", s);
    }
    return {params, args};
}

// Fuses pointwise stages first..last - 1 into the loads of stencil `last`: its own
// plan's kernels, built after a framecl_fused_input that loads the run's input and
// applies the stages' functions (plugin.h, fused_loads). Or says why not.
FusionNote fuseLoads(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages, uint32_t first,
                     uint32_t last, const std::vector<PointwiseFunction>& functions)
{
    FusionNote note{first, last, false, {}};
    const framecl_format& in = stages[first].in;
    const uint32_t producers = last - first;
    framecl_plan plan = stages[last].plan;
    std::set<std::string> kernels;
    for (uint32_t d = 0; d < plan.dispatch_count; ++d) {
        framecl_dispatch& dispatch = plan.dispatches[d];
        kernels.insert(dispatch.kernel);
        bool reads_input = false;
        for (uint32_t a = 0; a < dispatch.arg_count; ++a) {
            framecl_arg& arg = dispatch.args[a];
            if (arg.kind == FRAMECL_ARG_PARAMS)
                arg.index = producers; // the stencil's own block, after the producers'
            reads_input |= arg.kind == FRAMECL_ARG_INPUT_PLANE;
        }
        if (!reads_input)
            continue;
        if (dispatch.arg_count + (planes(in) - 1) + producers > FRAMECL_MAX_ARGS) {
            note.what = fmt::format("kernel {} would take more than {} arguments", dispatch.kernel, FRAMECL_MAX_ARGS);
            return note;
        }
        for (uint32_t p = 1; p < planes(in); ++p)
            dispatch.args[dispatch.arg_count++] = {FRAMECL_ARG_INPUT_PLANE, p, 0, 0, 0, 0};
        for (uint32_t s = 0; s < producers; ++s)
            dispatch.args[dispatch.arg_count++] = {FRAMECL_ARG_PARAMS, s, 0, 0, 0, 0};
    }
    // The stencil's file comes after framecl_fused_input, below.
    auto source = runSource(pipeline, first, functions, last - first, kernels);
    if (!source) {
        note.what = source.error().message;
        return note;
    }
    const auto [params, args] = fusedLoadArgs(planes(in), producers);
    const char* in1 = planes(in) > 1 ? ", fused_in1, fused_in1_offset, fused_in1_stride" : "";
    std::string loads =
        fmt::format("    px[0] = framecl_load_{}(in0, in0_offset, in0_stride{}, x, y);\n", *fusedFormat(in.fourcc), in1);
    for (uint32_t s = 0; s < producers; ++s)
        loads += fmt::format("    {}(px, x, y, fused_params{});\n", functions[s].function, s);
    *source += fmt::format("\n#line 1 \"{}\"\n"
                           "#undef FRAMECL_FUSED_INPUT\n#define FRAMECL_FUSED_INPUT 1\n"
                           "#undef FRAMECL_FUSED_PARAMS\n#define FRAMECL_FUSED_PARAMS {}\n"
                           "#undef FRAMECL_FUSED_ARGS\n#define FRAMECL_FUSED_ARGS {}\n"
                           "uint4 framecl_fused_input(__global const uchar* restrict in0, uint in0_offset, "
                           "uint in0_stride FRAMECL_FUSED_PARAMS, uint x, uint y)\n"
                           "{{\n    uint4 px[1];\n{}    return px[0];\n}}\n",
                           kernelName(pipeline, first, last - 1) + "_loads", params, args, loads);
    const Plugin& stencil = *pipeline.stages[last].plugin;
    *source += *pipeline.programs->kernelText(stencil, plan.dispatches[0].kernel_file);
    const FusedProgram* built =
        buildRun(pipeline, stages, note, *source, plan.dispatches[0].kernel, [&](const FusedProgram&) { return plan; });
    if (!built)
        return note;
    std::vector<std::string> names;
    for (uint32_t k = first; k < last; ++k)
        names.push_back(pipeline.stages[k].plugin->name());
    note.what = fmt::format("{} with {} in its loads", built->kernel, fmt::join(names, ", "));
    return note;
}

// Stages first..last fuse, with these functions.
struct Run {
    uint32_t first = 0;
    uint32_t last = 0;
    std::vector<PointwiseFunction> functions;
};

// Whether the stencil after `run` may compute the run on each pixel it loads: the run's
// stages are pointwise, per pixel, and none makes NV12, whose chroma is a 2x2 block's.
bool loadable(const std::vector<StagePlan>& stages, const Run& run)
{
    for (uint32_t k = run.first; k <= run.last; ++k) {
        const PointwiseFunction& function = run.functions[k - run.first];
        if (function.reads_input || function.block != 1 || stages[k].out.fourcc == DRM_FORMAT_NV12)
            return false;
    }
    return true;
}

// The runs of two or more stages of `stages` that may fuse: a stencil or a pointwise
// stage, then pointwise stages, and last perhaps a stencil taking them into its loads
// (loadable). A stage that says it is fusable and cannot be adds its reason to `notes`.
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
        if (eligible[k].function->fused_loads) { // ends a run, never begins one
            ++k;
            continue;
        }
        Run run{uint32_t(k), uint32_t(k), {*eligible[k].function}};
        while (run.last + 1 < stages.size() && eligible[run.last + 1].function &&
               !eligible[run.last + 1].function->reads_input && run.functions.size() < max_run) {
            const PointwiseFunction& next = *eligible[run.last + 1].function;
            if (next.fused_loads && !loadable(stages, run))
                break;
            run.functions.push_back(next);
            ++run.last;
            if (next.fused_loads)
                break;
        }
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
        notes.push_back(!stages[run.first].choice.fuse
                            ? FusionNote{run.first, run.last, false, "the tuner timed it faster unfused"}
                        : run.functions.back().fused_loads
                            ? fuseLoads(pipeline, stages, run.first, run.last, run.functions)
                            : fuseRun(pipeline, stages, run.first, run.last, run.functions));
    std::sort(notes.begin(), notes.end(), [](const FusionNote& a, const FusionNote& b) { return a.first < b.first; });
    return notes;
}

std::vector<std::pair<uint32_t, uint32_t>> fusableRuns(const PipelineDefinition& pipeline,
                                                       const std::vector<StagePlan>& stages)
{
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    if (!pipeline.fuse)
        return runs;
    std::vector<FusionNote> notes;
    for (const Run& run : findRuns(pipeline, stages, notes))
        runs.emplace_back(run.first, run.last);
    return runs;
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
