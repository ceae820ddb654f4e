// framecl-bench: how fast each filter runs on this machine's OpenCL device. For each
// filter, variant and frame size it times the stage alone (GPU time from profiling
// events, median of --runs after a warm-up), gives its effective bandwidth (the frame's
// bytes read and written over that time) against the device's measured copy bandwidth,
// and its speedup over the plugin's first variant, the baseline. With --tune it adds
// the tuner's choice (variant and work-group size). With --budgets it runs the first
// selected filter at the first size untiled and under each kernel-time budget instead
// (budget_bench.hpp). A filter that compares each frame with the previous one
// (blockmatch) runs on a moving pair of frames, and its output is checked: a wrong one
// drops its numbers and the bench exits 1 (pair_timer.hpp). A pipeline case (the camera
// ISP, RAW10 to NV12) times the whole pipeline unfused and fused, each stage within it,
// and a copy skeleton of the bytes its stages move either way (bench_report.hpp). Markdown on stdout or
// --markdown, JSON with --json. No daemon and no IPC: it links the GPU, memory and pipeline
// components only, so it runs wherever an OpenCL driver does.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "bench_cases.hpp"
#include "bench_report.hpp"
#include "budget_bench.hpp"
#include "pair_timer.hpp"
#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "gpu/cl_error.hpp"
#include "gpu/context.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/fusion.hpp"
#include "pipeline/stage_plan.hpp"
#include "pipeline/stage_timing.hpp"
#include "pipeline/tuner.hpp"

namespace {

using namespace framecl;
using namespace framecl::bench;

struct Options {
    std::string device = "auto";
    std::vector<std::string> plugin_dirs;
    std::vector<std::string> kernel_dirs;
    std::string cache_dir;
    std::vector<std::string> sizes = {"512x512", "1920x1080", "3264x2448", "7680x4320"};
    std::vector<std::string> filters; // empty: all
    int runs = 20;
    int warmup = 3;
    bool tune = false;
    double tuning_budget_s = 10;
    bool extra_sizes = true;
    std::vector<double> budgets_ms; // --budgets: the kernel-time budget table instead
    int budget_frames = 10;
    std::string markdown_file;
    std::string json_file;
    std::string dump_dir; // --dump: input and output frames of each case's last measurement
};

std::string tomlList(const std::vector<std::string>& items)
{
    std::vector<std::string> quoted;
    for (const auto& item : items)
        quoted.push_back(fmt::format("\"{}\"", item));
    return fmt::format("[{}]", fmt::join(quoted, ", "));
}

std::string pipelineName(size_t bench_case, const FrameSize& size)
{
    return fmt::format("bench-{}-{}x{}", bench_case, size.width, size.height);
}

// A one-stage case where --filters names its plugin; a pipeline case where it names every
// plugin of the pipeline.
bool selected(const Options& options, const BenchCase& bench_case)
{
    const auto named = [&](const std::string& plugin) {
        return std::find(options.filters.begin(), options.filters.end(), plugin) != options.filters.end();
    };
    return options.filters.empty() ||
           (named(bench_case.plugin) &&
            std::all_of(bench_case.then.begin(), bench_case.then.end(),
                        [&](const NextStage& stage) { return named(stage.plugin); }));
}

std::string inlineTable(const std::string& plugin, const std::string& parameters)
{
    return fmt::format("{{ plugin = \"{}\"{}{} }}", plugin, parameters.empty() ? "" : ", ", parameters);
}

std::vector<FrameSize> sizesOf(const Options& options, const std::vector<FrameSize>& sizes, const BenchCase& bench_case)
{
    std::vector<FrameSize> all = sizes;
    if (options.extra_sizes)
        all.insert(all.end(), bench_case.extra_sizes.begin(), bench_case.extra_sizes.end());
    return all;
}

// A config holding one [[pipeline]] per selected case and size.
std::string configText(const Options& options, const std::vector<FrameSize>& sizes)
{
    std::string text = fmt::format("[daemon]\nplugin_dirs = {}\nkernel_dirs = {}\npipeline_dirs = []\n"
                                   "cache_dir = \"{}\"\n[gpu]\ndevice = \"{}\"\ntuning = \"off\"\n",
                                   tomlList(options.plugin_dirs), tomlList(options.kernel_dirs), options.cache_dir,
                                   options.device);
    const auto& cases = benchCases();
    for (size_t c = 0; c < cases.size(); ++c) {
        if (!selected(options, cases[c]) || cases[c].plugin == "copy")
            continue;
        for (const FrameSize& size : sizesOf(options, sizes, cases[c])) {
            std::vector<std::string> stages{inlineTable(cases[c].plugin, cases[c].parameters(size))};
            for (const NextStage& stage : cases[c].then)
                stages.push_back(inlineTable(stage.plugin, stage.parameters));
            text += fmt::format("[[pipeline]]\nname = \"{}\"\nstages = [ {} ]\n", pipelineName(c, size),
                                fmt::join(stages, ", "));
        }
    }
    return text;
}

// Copies of `sizes` bytes, one clEnqueueCopyBuffer each, in order on one queue, per run:
// the medians of their profiled times summed, and of their span from the first's start
// to the last's end, in nanoseconds. On a device timed by the host's clock
// (gpu/timestamps.hpp) both are the host's time from the first enqueue to the wait's end.
Result<std::pair<uint64_t, uint64_t>> copyTimes(const gpu::GpuContext& gpu, const std::vector<uint64_t>& sizes,
                                                int warmup, int runs)
{
    const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    cl_int err = CL_SUCCESS;
    cl::Buffer from(gpu.context(), CL_MEM_READ_WRITE, largest, nullptr, &err);
    cl::Buffer to(gpu.context(), CL_MEM_READ_WRITE, largest, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, fmt::format("{} bytes to copy", largest)));
    const uint8_t zero = 0;
    gpu.queue().enqueueFillBuffer(from, zero, 0, largest);
    std::vector<uint64_t> sums, spans;
    for (int i = 0; i < warmup + runs; ++i) {
        std::vector<cl::Event> events(sizes.size());
        const uint64_t enqueued_ns = monotonicNs();
        for (size_t c = 0; c < sizes.size(); ++c)
            if ((err = gpu.queue().enqueueCopyBuffer(from, to, 0, 0, sizes[c], nullptr, &events[c])) != CL_SUCCESS)
                return fail(gpu::clFailure("clEnqueueCopyBuffer", err, "a timed copy"));
        if ((err = events.back().wait()) != CL_SUCCESS)
            return fail(gpu::clFailure("clWaitForEvents", err, "a timed copy"));
        const uint64_t host_ns = monotonicNs() - enqueued_ns;
        uint64_t sum = 0, first = UINT64_MAX, last = 0;
        for (const cl::Event& event : events) {
            const auto span = gpu.profiledSpan(event);
            if (!span) {
                sum = 0;
                break;
            }
            sum += span->ns();
            first = std::min(first, span->start_ns);
            last = std::max(last, span->end_ns);
        }
        if (i >= warmup) {
            sums.push_back(sum > 0 ? sum : host_ns);
            spans.push_back(sum > 0 ? last - first : host_ns);
        }
    }
    return std::pair{pipeline::median(sums), pipeline::median(spans)};
}

// The device's copy bandwidth: clEnqueueCopyBuffer of `bytes`, read and written, in
// bytes per nanosecond (GB/s), the median of the runs.
Result<double> copyBandwidth(const gpu::GpuContext& gpu, uint64_t bytes, int warmup, int runs)
{
    auto times = copyTimes(gpu, {bytes}, warmup, runs);
    if (!times)
        return tl::unexpected(times.error());
    return times->first ? 2.0 * double(bytes) / double(times->first) : 0.0;
}

// A pipeline case's copy skeleton (Measurement::skeleton_median_ns): one copy per stage
// of half that stage's bytes (it reads them and writes them).
Result<std::pair<uint64_t, uint64_t>> copySkeleton(const gpu::GpuContext& gpu, const std::vector<uint64_t>& stage_bytes,
                                                   int warmup, int runs)
{
    std::vector<uint64_t> halves;
    for (const uint64_t bytes : stage_bytes)
        halves.push_back((bytes + 1) / 2);
    return copyTimes(gpu, halves, warmup, runs);
}

std::string choiceText(const pipeline::StageChoice& choice)
{
    const std::string variant = choice.variant.empty() ? "" : choice.variant + ", ";
    if (choice.local[0] == 0)
        return variant + "default work group"; // the plugin's local_hint, else the driver's
    if (choice.local[1] == 0)
        return fmt::format("{}work group {}", variant, choice.local[0]);
    return fmt::format("{}work group {}x{}", variant, choice.local[0], choice.local[1]);
}

// A row for a case that did not run, saying why.
Measurement notRun(const std::string& filter, const pipeline::FrameShape& input, std::string why)
{
    Measurement m;
    m.filter = filter;
    m.input = pipeline::describe(input);
    m.variant = "-";
    m.error = std::move(why);
    return m;
}

// `Timer`: pipeline::StageTimer, or PairTimer for a case of motion (bench_cases.hpp).
template <typename Timer> constexpr bool moving = std::is_same_v<Timer, PairTimer>;

template <typename Timer>
Measurement measure(Timer& timer, const std::string& filter, const std::string& variant,
                    const std::vector<pipeline::StageChoice>& choices, const Options& options)
{
    Measurement m;
    m.filter = filter;
    m.input = pipeline::describe(timer.input());
    m.variant = variant;
    auto times = timer.time(choices, options.warmup, options.runs);
    if (!times) {
        m.error = times.error().message;
        return m;
    }
    m.median_ns = pipeline::median(times->gpu_ns);
    m.min_ns = *std::min_element(times->gpu_ns.begin(), times->gpu_ns.end());
    m.max_ns = *std::max_element(times->gpu_ns.begin(), times->gpu_ns.end());
    m.wall_median_ns = pipeline::median(times->wall_ns);
    m.image_copy_median_ns = pipeline::median(times->copy_ns);
    m.frame_bytes = timer.frameBytes();
    if constexpr (!moving<Timer>) {
        if (times->stage_ns.size() > 1) {
            for (size_t stage = 0; stage < times->stage_ns.size(); ++stage)
                m.stages.push_back({timer.stageNames()[stage], pipeline::median(times->stage_ns[stage])});
            m.span_median_ns = pipeline::median(times->span_ns);
        }
    }
    // A fast wrong frame is not a result: its numbers are dropped, and the bench fails.
    if constexpr (moving<Timer>) {
        if (auto checked = timer.checkOutput(); !checked) {
            m = notRun(filter, timer.input(), checked.error().message);
            m.variant = variant;
            m.failed_check = true;
        }
    }
    return m;
}

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes)
{
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// With --dump, writes the timer's input frame and last output to the dump directory,
// named after the case and size, and records them in `m`: a reader (compare_opencv.py)
// checks the output against another implementation's on the same input. A moving pair's
// input is B, and A, the previous frame, is written too.
template <typename Timer>
void dumpFrames(const Timer& timer, const std::string& slug, const Options& options, Measurement& m)
{
    if (options.dump_dir.empty() || !m.error.empty())
        return;
    auto input = timer.inputBytes();
    auto output = timer.outputBytes();
    if (!input || !output) {
        m.error = (!input ? input.error() : output.error()).message;
        return;
    }
    const std::filesystem::path dir(options.dump_dir);
    std::filesystem::create_directories(dir);
    m.input_file = (dir / (slug + ".in")).string();
    m.output_file = (dir / (slug + ".out")).string();
    writeFile(m.input_file, *input);
    writeFile(m.output_file, *output);
    m.output = pipeline::describe(timer.output());
    if constexpr (moving<Timer>) {
        m.previous_file = (dir / (slug + ".prev")).string();
        writeFile(m.previous_file, timer.previousBytes());
    } else if (const auto& statistics = timer.statistics()) {
        m.statistics_file = (dir / (slug + ".stats")).string();
        const auto* bytes = reinterpret_cast<const uint8_t*>(statistics.get());
        writeFile(m.statistics_file, std::vector<uint8_t>(bytes, bytes + sizeof(framecl_statistics)));
    }
}

template <typename Timer>
Result<Timer> openTimer(const gpu::GpuContext& gpu, const pipeline::PipelineDefinition& definition,
                        const pipeline::FrameShape& input, const BenchCase& bench_case)
{
    if constexpr (moving<Timer>)
        return PairTimer::open(gpu, pipeline::singleStage(definition, 0), input, *bench_case.motion);
    else
        return pipeline::StageTimer::open(gpu, pipeline::singleStage(definition, 0), input);
}

// Every variant of `definition`'s stage on frames of `input`, the first the baseline;
// with --tune, then the tuner's choice. With --dump, the frames of the last measurement
// are written under `slug`.
template <typename Timer>
void benchStage(const gpu::GpuContext& gpu, const pipeline::PipelineDefinition& definition,
                const pipeline::FrameShape& input, const BenchCase& bench_case, const std::string& slug,
                const Options& options, Report& report)
{
    const std::string& filter = bench_case.name;
    auto timer = openTimer<Timer>(gpu, definition, input, bench_case);
    if (!timer) {
        report.measurements.push_back(notRun(filter, input, timer.error().message));
        return;
    }
    const pipeline::StageDefinition& stage = definition.stages[0];
    std::vector<std::string> variants{""};
    if (const auto index = pipeline::variantParam(stage.plugin->params())) {
        const auto& allowed = stage.plugin->params()[*index].allowed;
        variants.assign(allowed.begin() + 1, allowed.end());
    }
    uint64_t baseline_ns = 0;
    for (const std::string& variant : variants) {
        Measurement m = measure(*timer, filter, variant.empty() ? "(one)" : variant, {{variant, {0, 0}}}, options);
        if (baseline_ns == 0 && m.error.empty())
            baseline_ns = m.median_ns;
        if (m.median_ns && variants.size() > 1)
            m.speedup = double(baseline_ns) / double(m.median_ns);
        fmt::print(stderr, "{} {} {}: {}\n", filter, m.input, m.variant,
                   m.error.empty() ? fmt::format("{:.3f} ms", double(m.median_ns) / 1e6) : m.error);
        report.measurements.push_back(std::move(m));
    }
    if (!options.tune) {
        dumpFrames(*timer, slug, options, report.measurements.back());
        return;
    }
    // A tuner of its own, with an empty cache in the bench's cache directory: it times
    // every candidate now, as framecld does on a device's first session (a moving pair's
    // stage on A alone, every frame: the search costs the same whatever it finds).
    const std::filesystem::path tuning_dir = std::filesystem::path(options.cache_dir) / "bench-tuning";
    std::filesystem::remove_all(tuning_dir);
    pipeline::Tuner tuner(gpu, tuning_dir,
                          std::chrono::milliseconds(int64_t(options.tuning_budget_s * 1000)));
    const auto choices = tuner.choose(definition, input);
    Measurement m = measure(*timer, filter, "tuned: " + choiceText(choices[0]), {choices[0]}, options);
    if (m.median_ns && baseline_ns)
        m.speedup = double(baseline_ns) / double(m.median_ns);
    dumpFrames(*timer, slug, options, m);
    fmt::print(stderr, "{} {} {}: {}\n", filter, m.input, m.variant,
               m.error.empty() ? fmt::format("{:.3f} ms", double(m.median_ns) / 1e6) : m.error);
    report.measurements.push_back(std::move(m));
}

// The bytes each stage reads and writes, tightly packed; for a fused run (fuseStages),
// the run's input and output at its first stage and none at the others.
std::vector<uint64_t> stageBytes(const std::vector<pipeline::StagePlan>& plans)
{
    std::vector<uint64_t> bytes;
    for (const pipeline::StagePlan& plan : plans) {
        const framecl_format& out = plans[plan.run_last].out;
        framecl_frame_layout layout{};
        bytes.push_back(&plan != &plans[plan.run_first]
                            ? 0
                            : framecl_packed_layout(plan.in.fourcc, plan.in.width, plan.in.height, &layout) +
                                  framecl_packed_layout(out.fourcc, out.width, out.height, &layout));
    }
    return bytes;
}

// A pipeline case: the whole pipeline unfused and fused (docs/architecture.md, "Fusion")
// with every stage's default variant, then with --tune the tuner's choice for each stage;
// each stage's time within the frame, and the copy skeleton of the stages' bytes, unfused
// and fused.
void benchPipeline(const gpu::GpuContext& gpu, const std::shared_ptr<const pipeline::PipelineDefinition>& definition,
                   const pipeline::FrameShape& input, const BenchCase& bench_case, const std::string& slug,
                   const Options& options, Report& report)
{
    const std::string& filter = bench_case.name;
    const auto unfused_definition = pipeline::unfused(*definition);
    auto plans = pipeline::negotiateFormats(*definition, input, {}, 0);
    auto fused_timer = pipeline::StageTimer::open(gpu, definition, input);
    auto unfused_timer = pipeline::StageTimer::open(gpu, unfused_definition, input);
    if (!plans || !fused_timer || !unfused_timer) {
        report.measurements.push_back(
            notRun(filter, input,
                   (!plans ? plans.error() : !fused_timer ? fused_timer.error() : unfused_timer.error()).message));
        return;
    }
    const std::vector<uint64_t> unfused_bytes = stageBytes(*plans);
    pipeline::fuseStages(*definition, *plans);
    const std::vector<uint64_t> fused_bytes = stageBytes(*plans);
    const auto skeleton = [&](const std::vector<uint64_t>& stage_bytes) {
        std::vector<uint64_t> moved;
        std::copy_if(stage_bytes.begin(), stage_bytes.end(), std::back_inserter(moved), [](uint64_t b) { return b; });
        return copySkeleton(gpu, moved, options.warmup, options.runs);
    };
    const auto unfused_skeleton = skeleton(unfused_bytes);
    const auto fused_skeleton = skeleton(fused_bytes);
    if (!unfused_skeleton || !fused_skeleton) {
        report.measurements.push_back(
            notRun(filter, input, (!unfused_skeleton ? unfused_skeleton : fused_skeleton).error().message));
        return;
    }
    const auto run = [&](pipeline::StageTimer& timer, const std::vector<uint64_t>& stage_bytes,
                         const std::pair<uint64_t, uint64_t>& skeleton_ns, const std::string& variant,
                         const std::vector<pipeline::StageChoice>& choices) {
        Measurement m = measure(timer, filter, variant, choices, options);
        if (m.error.empty()) {
            for (size_t stage = 0; stage < m.stages.size(); ++stage)
                m.stages[stage].bytes = stage_bytes[stage];
            std::tie(m.skeleton_median_ns, m.skeleton_span_median_ns) = skeleton_ns;
        }
        fmt::print(stderr, "{} {} {}: {}\n", filter, m.input, m.variant,
                   m.error.empty() ? fmt::format("{:.3f} ms", double(m.median_ns) / 1e6) : m.error);
        return m;
    };
    // The unfused frame, then the fused one with what it is measured against: the unfused
    // frame's time and its slowest stage's. Each with its choices and their text.
    using Choices = std::pair<std::string, std::vector<pipeline::StageChoice>>;
    const auto pair = [&](const Choices& unfused_choices, const Choices& fused_choices) {
        Measurement unfused = run(*unfused_timer, unfused_bytes, *unfused_skeleton, "unfused " + unfused_choices.first,
                                  unfused_choices.second);
        Measurement fused =
            run(*fused_timer, fused_bytes, *fused_skeleton, "fused " + fused_choices.first, fused_choices.second);
        if (unfused.error.empty() && fused.error.empty()) {
            fused.unfused_median_ns = unfused.median_ns;
            for (const StageMeasurement& stage : unfused.stages)
                fused.slowest_stage_ns = std::max(fused.slowest_stage_ns, stage.median_ns);
        }
        return std::pair{std::move(unfused), std::move(fused)};
    };
    auto measured = pair({"defaults", {}}, {"defaults", {}});
    if (options.tune) {
        report.measurements.push_back(std::move(measured.first));
        report.measurements.push_back(std::move(measured.second));
        const std::filesystem::path tuning_dir = std::filesystem::path(options.cache_dir) / "bench-tuning";
        std::filesystem::remove_all(tuning_dir);
        pipeline::Tuner tuner(gpu, tuning_dir, std::chrono::milliseconds(int64_t(options.tuning_budget_s * 1000)));
        // Unfused, each stage's choice timed alone; fused, the run's stencil may run
        // another variant (pipeline/tuner.hpp).
        const auto tuned = [&](const pipeline::PipelineDefinition& timed) {
            const auto choices = tuner.choose(timed, input);
            std::vector<std::string> texts;
            for (const auto& choice : choices)
                texts.push_back(choiceText(choice));
            return Choices{fmt::format("tuned: {}", fmt::join(texts, "; ")), choices};
        };
        measured = pair(tuned(*unfused_definition), tuned(*definition));
    }
    dumpFrames(*unfused_timer, slug + "-unfused", options, measured.first);
    dumpFrames(*fused_timer, slug, options, measured.second);
    report.measurements.push_back(std::move(measured.first));
    report.measurements.push_back(std::move(measured.second));
}

void write(const Options& options, const std::string& markdown_text, const nlohmann::json& json_value)
{
    if (options.markdown_file.empty()) {
        fmt::print("{}", markdown_text);
    } else {
        std::ofstream(options.markdown_file) << markdown_text;
    }
    if (!options.json_file.empty())
        std::ofstream(options.json_file) << json_value.dump(2) << "\n";
}

// The first selected filter at `size`, untiled and under each of --budgets.
int runBudgets(const Options& options, const gpu::GpuContext& gpu, const pipeline::Catalog& catalog,
               const FrameSize& size, const std::string& device, const std::string& command)
{
    const auto& cases = benchCases();
    for (size_t c = 0; c < cases.size(); ++c) {
        if (!selected(options, cases[c]) || cases[c].plugin == "copy")
            continue;
        const auto definition = catalog.find(pipelineName(c, size));
        if (!definition) {
            fmt::print(stderr, "framecl-bench: plugin '{}' not loaded\n", cases[c].plugin);
            return 1;
        }
        const pipeline::FrameShape input{cases[c].fourcc, size.width, size.height};
        BudgetReport report = benchBudgets(gpu, definition, input, options.budgets_ms, options.warmup,
                                           options.budget_frames);
        report.device = device;
        report.command = command;
        for (const BudgetRow& row : report.rows)
            fmt::print(stderr, "budget {:g} ms: {} tiles, longest {:.3f} ms, {:.2f} fps{}\n", row.budget_ms, row.tiles,
                       row.longest_ms, row.fps, row.error.empty() ? "" : " — " + row.error);
        write(options, budgetMarkdown(report), budgetJson(report));
        return 0;
    }
    fmt::print(stderr, "framecl-bench: --budgets needs a filter (--filters)\n");
    return 2;
}

int run(const Options& options, const std::string& command)
{
    std::vector<FrameSize> sizes;
    for (const auto& text : options.sizes) {
        FrameSize size{};
        if (!parseSize(text, size)) {
            fmt::print(stderr, "framecl-bench: --sizes: '{}' is not WIDTHxHEIGHT\n", text);
            return 2;
        }
        sizes.push_back(size);
    }
    const auto path_defaults = config::defaultPaths();
    auto config = config::parseConfig(configText(options, sizes), "framecl-bench", path_defaults);
    if (!config) {
        fmt::print(stderr, "framecl-bench: {}\n", config.error().joined());
        return 2;
    }
    auto engine = pipeline::startEngine(*config);
    if (!engine) {
        fmt::print(stderr, "framecl-bench: {}\n", engine.error().message);
        return 1;
    }
    const gpu::GpuContext& gpu = *engine->gpu;
    const pipeline::PipelineSet& set = engine->pipelines;
    for (const auto& problem : set.problems)
        fmt::print(stderr, "framecl-bench: {}\n", problem);

    const auto& caps = gpu.capabilities();
    Report report;
    report.device = fmt::format("{} ({}, driver {}, {} compute units)", caps.name, caps.opencl_version,
                                caps.driver_version, caps.max_compute_units);
    report.command = command;
    report.timing = gpu.clock().device() ? "profiling events"
                                         : "the host's clock around clFinish (" + gpu.clock().reason + ")";
    report.runs = options.runs;
    FrameSize largest = sizes.front();
    for (const FrameSize& size : sizes)
        if (uint64_t(size.width) * size.height > uint64_t(largest.width) * largest.height)
            largest = size;
    report.copy_bytes = uint64_t(largest.width) * largest.height * 4;
    auto bandwidth = copyBandwidth(gpu, report.copy_bytes, options.warmup, options.runs);
    if (!bandwidth) {
        fmt::print(stderr, "framecl-bench: {}\n", bandwidth.error().message);
        return 1;
    }
    report.copy_gbs = *bandwidth;
    fmt::print(stderr, "{}: copy {:.1f} GB/s\n", report.device, report.copy_gbs);

    const auto& cases = benchCases();
    if (!options.budgets_ms.empty()) {
        if (!gpu.clock().device()) {
            fmt::print(stderr, "framecl-bench: --budgets measures each dispatch, which needs the device's "
                               "profiling timestamps: {}\n", gpu.clock().reason);
            return 1;
        }
        return runBudgets(options, gpu, set.catalog, sizes.front(), report.device, command);
    }
    for (size_t c = 0; c < cases.size(); ++c) {
        if (!selected(options, cases[c]))
            continue;
        for (const FrameSize& size : sizesOf(options, sizes, cases[c])) {
            const pipeline::FrameShape input{cases[c].fourcc, size.width, size.height};
            const std::string name = cases[c].plugin == "copy" ? "copy" : pipelineName(c, size);
            const auto definition = set.catalog.find(name);
            if (!definition) {
                report.measurements.push_back(
                    notRun(cases[c].name, input, fmt::format("plugin '{}' not loaded", cases[c].plugin)));
                continue;
            }
            if (!cases[c].then.empty())
                benchPipeline(gpu, definition, input, cases[c], pipelineName(c, size), options, report);
            else if (cases[c].motion)
                benchStage<PairTimer>(gpu, *definition, input, cases[c], pipelineName(c, size), options, report);
            else
                benchStage<pipeline::StageTimer>(gpu, *definition, input, cases[c], pipelineName(c, size), options,
                                                 report);
        }
    }

    write(options, markdown(report), json(report));
    const auto failed = std::count_if(report.measurements.begin(), report.measurements.end(),
                                      [](const Measurement& m) { return m.failed_check; });
    if (failed > 0)
        fmt::print(stderr, "framecl-bench: {} measurement(s) failed the check of their output\n", failed);
    return failed > 0 ? 1 : 0;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecl-bench: GPU time of each filter, variant and frame size on an OpenCL device"};
    Options options;
    const auto defaults = config::defaultPaths();
    for (const auto& dir : defaults.plugin_dirs)
        options.plugin_dirs.push_back(dir.string());
    for (const auto& dir : defaults.kernel_dirs)
        options.kernel_dirs.push_back(dir.string());
    options.cache_dir = (std::filesystem::temp_directory_path() / "framecl-bench-cache").string();
    app.add_option("--device", options.device, "OpenCL device: auto, or part of its name")->capture_default_str();
    app.add_option("--plugin-dir", options.plugin_dirs, "Plugin directories")->capture_default_str();
    app.add_option("--kernel-dir", options.kernel_dirs, "Kernel source directories")->capture_default_str();
    app.add_option("--cache-dir", options.cache_dir, "Program cache")->capture_default_str();
    app.add_option("--sizes", options.sizes, "Frame sizes, WIDTHxHEIGHT")->delimiter(',')->capture_default_str();
    app.add_option("--filters", options.filters, "Plugins to run (default: all)")->delimiter(',');
    app.add_option("--runs", options.runs, "Timed runs per measurement")->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--warmup", options.warmup, "Untimed runs first")->check(CLI::Range(0, 1000))
        ->capture_default_str();
    app.add_flag("--tune", options.tune, "Also time the tuner's choice of variant and work-group size");
    app.add_option("--tuning-budget", options.tuning_budget_s, "Seconds the tuner may spend per stage")
        ->capture_default_str();
    app.add_flag("!--no-extra-sizes", options.extra_sizes, "Skip sizes a filter's target adds (mean shift 2560x2560)");
    app.add_option("--budgets", options.budgets_ms,
                   "Kernel-time budgets in ms: run the first filter at the first size untiled and under each")
        ->delimiter(',')
        ->check(CLI::PositiveNumber);
    app.add_option("--budget-frames", options.budget_frames, "Frames measured per budget")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--markdown", options.markdown_file, "Write the tables here instead of stdout");
    app.add_option("--json", options.json_file, "Also write JSON here");
    app.add_option("--dump", options.dump_dir,
                   "Write each case's input frame and last output here, named in the JSON (compare_opencv.py)");
    CLI11_PARSE(app, argc, argv);
    log::setup(log::Sink::Stderr, spdlog::level::warn);

    std::vector<std::string> words(argv, argv + argc);
    words[0] = "framecl-bench";
    return run(options, fmt::format("{}", fmt::join(words, " ")));
}
