#include "pipeline/tuner.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "base/read_file.hpp"
#include "base/write_file.hpp"
#include "pipeline/fusion.hpp"
#include "pipeline/stage_plan.hpp"
#include "pipeline/stage_timing.hpp"

namespace framecl::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// Version of tuning.json's layout; a file of another is ignored and rewritten.
constexpr int file_format = 1;

// Frames per candidate: one to warm up (a driver may compile for a new work-group
// size at first launch, as PoCL does), then the median of three — or fewer where it
// cannot win: only one where that one took more than hopeless times the best
// candidate's, two where both were slower than the best. Its frames take GPU time the
// clients' frames could have had (epsilon's `image` on PoCL here: 175 ms a frame at
// 640x360 with every core busy).
constexpr int warmup_frames = 1;
constexpr int timed_frames = 3;
constexpr uint64_t hopeless = 2;

// The work-group shapes tried besides the driver's choice: the powers of two from 64
// to 256 work items that Adreno's guide (§6.1.5) and other GPUs favour, wide rows
// first because rows are contiguous in memory; 8x16 for kernels whose work items are
// already 16 pixels wide (epsilon's wide variants ran fastest so on the H100).
constexpr std::array<std::array<size_t, 2>, 7> shapes_2d = {
    {{16, 4}, {16, 8}, {32, 4}, {32, 8}, {16, 16}, {64, 4}, {8, 16}}};
constexpr std::array<std::array<size_t, 2>, 3> shapes_1d = {{{64, 0}, {128, 0}, {256, 0}}};

std::string valueText(const config::ParameterValue& value)
{
    return std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>)
                return v ? "true" : "false";
            else if constexpr (std::is_same_v<T, std::string>)
                return v;
            else if constexpr (std::is_same_v<T, std::vector<double>>)
                return fmt::format("[{}]", fmt::join(v, ","));
            else
                return fmt::format("{}", v);
        },
        value);
}

// A run's fusion choice: "unfused, 48.142 ms (fused 85.627 ms)", or "fused, stage 2 as
// variant pixel, ..." where the run's last stage, `last` (from 1), runs another variant.
std::string fusionText(const TunedStage& tuned, size_t last)
{
    const bool fused = tuned.choice.variant == "fused";
    const std::string stencil =
        tuned.stencil.variant.empty() ? "" : fmt::format(", stage {} as variant {}", last, tuned.stencil.variant);
    return fmt::format("{}{}, {:.3f} ms ({} {:.3f} ms)", tuned.choice.variant, stencil, double(tuned.gpu_ns) / 1e6,
                       fused ? "unfused" : "fused", double(tuned.other_ns) / 1e6);
}

std::string choiceText(const TunedStage& tuned)
{
    std::string text = tuned.choice.variant.empty() ? "" : "variant " + tuned.choice.variant + ", ";
    if (tuned.choice.local[0] == 0)
        text += "default work group"; // the plugin's local_hint, else the driver's
    else if (tuned.choice.local[1] == 0)
        text += fmt::format("work group {}", tuned.choice.local[0]);
    else
        text += fmt::format("work group {}x{}", tuned.choice.local[0], tuned.choice.local[1]);
    return text + fmt::format(", {:.3f} ms{}{}", double(tuned.gpu_ns) / 1e6,
                              tuned.copies_input ? " with its input copied into an image" : "",
                              tuned.complete ? "" : " (the best of the candidates timed within the budget)");
}

// Whether a choice read from tuning.json can run: its variant is one of the stage's
// candidates' and its work group fits the device (any shape: an edited file may name
// one the tuner does not try).
bool usable(const StageChoice& choice, const std::vector<StageChoice>& candidates, size_t max_work_group_size)
{
    const bool known_variant = std::any_of(candidates.begin(), candidates.end(),
                                           [&](const StageChoice& c) { return c.variant == choice.variant; });
    return known_variant && choice.local[0] * std::max<size_t>(choice.local[1], 1) <= max_work_group_size;
}

// Whether two plans dispatch the same kernels: `auto` is one of the named variants.
bool sameKernels(const framecl_plan& a, const framecl_plan& b)
{
    if (a.dispatch_count != b.dispatch_count)
        return false;
    for (uint32_t d = 0; d < a.dispatch_count; ++d)
        if (std::string_view(a.dispatches[d].kernel) != b.dispatches[d].kernel)
            return false;
    return true;
}

// The variants, each with the driver's work group, that stage `stage` (planned as
// `planned`, the last of a run that fuses) may run as in the run's fused kernel instead
// of its own choice: where its variant is left to auto, those of its others that take
// loads too and run other kernels. None for a pointwise stage.
std::vector<StageChoice> loadsAlternatives(const StageDefinition& stage, const StagePlan& planned,
                                           size_t max_work_group_size)
{
    std::vector<StageChoice> found;
    const auto variant = variantParam(stage.plugin->params());
    if (!variant)
        return found;
    for (const StageChoice& candidate : Tuner::candidates(stage, planned.in, max_work_group_size)) {
        if (candidate.local != std::array<size_t, 2>{0, 0} || candidate.variant == "auto" ||
            candidate.variant == planned.choice.variant)
            continue;
        const ResolvedParams params = stage.params.with(*variant, candidate.variant);
        auto answer = stage.plugin->pointwise(planned.in, params);
        auto plan = stage.plugin->plan(planned.in, params);
        if (answer && *answer && (*answer)->fused_loads && plan && !sameKernels(*plan, planned.plan))
            found.push_back(candidate);
    }
    return found;
}

} // namespace

std::string parameterText(const StageDefinition& stage)
{
    std::vector<std::string> parts;
    const auto& schema = stage.plugin->params();
    for (size_t i = 0; i < schema.size(); ++i)
        parts.push_back(schema[i].name + "=" + valueText(stage.params.source(i)));
    return fmt::format("{}", fmt::join(parts, " "));
}

Tuner::Tuner(const gpu::GpuContext& gpu, std::filesystem::path cache_dir, std::chrono::milliseconds budget,
             uint64_t kernel_budget_ns, std::shared_ptr<const CompileAhead> compile_ahead)
    : gpu_(&gpu), file_(std::move(cache_dir) / "tuning.json"), budget_(budget), kernel_budget_ns_(kernel_budget_ns),
      compile_ahead_(std::move(compile_ahead))
{
    auto text = readFile(file_);
    if (!text) {
        if (text.error() != std::errc::no_such_file_or_directory)
            log::get("tuner")->warn("cannot read {}: {}; tuning anew", file_.string(), text.error().message());
        return;
    }
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    try {
        if (json.is_discarded() || json.value("format", 0) != file_format)
            throw std::runtime_error("not a tuning file of format " + std::to_string(file_format));
        for (const auto& [key, entry] : json.at("choices").items()) {
            TunedStage tuned;
            tuned.choice.variant = entry.at("variant").get<std::string>();
            tuned.choice.local = entry.at("local").get<std::array<size_t, 2>>();
            tuned.gpu_ns = entry.at("gpu_ns").get<uint64_t>();
            tuned.last_used = entry.value("last_used", uint64_t{0});
            tuned.copies_input = entry.value("copies_input", false);
            tuned.other_ns = entry.value("other_ns", uint64_t{0});
            tuned.stencil.variant = entry.value("stencil_variant", std::string());
            tuned.stencil.local = entry.value("stencil_local", std::array<size_t, 2>{0, 0});
            uses_ = std::max(uses_, tuned.last_used);
            choices_[key] = tuned;
        }
    } catch (const std::exception& e) {
        choices_.clear();
        log::get("tuner")->warn("ignoring {}: {}; tuning anew", file_.string(), e.what());
    }
}

std::string Tuner::stageKey(const StageDefinition& stage) const
{
    const auto& caps = gpu_->capabilities();
    return fmt::format("{}|{}|{}@{}|{}", caps.name, caps.driver_version, stage.plugin->name(),
                       stage.plugin->version(), parameterText(stage));
}

std::string Tuner::fusionPrefix(const PipelineDefinition& pipeline, size_t first, size_t last) const
{
    const auto& caps = gpu_->capabilities();
    std::vector<std::string> stages;
    for (size_t k = first; k <= last; ++k)
        stages.push_back(fmt::format("{}@{}|{}", pipeline.stages[k].plugin->name(), pipeline.stages[k].plugin->version(),
                                     parameterText(pipeline.stages[k])));
    return fmt::format("{}|{}|fusion|{}|", caps.name, caps.driver_version, fmt::join(stages, " + "));
}

std::vector<StageChoice> Tuner::candidates(const StageDefinition& stage, const FrameShape& input,
                                           size_t max_work_group_size)
{
    std::vector<std::string> variants{""};
    const auto variant = variantParam(stage.plugin->params());
    if (variant && std::string(stage.params[*variant].string_value) == "auto") {
        const auto& allowed = stage.plugin->params()[*variant].allowed;
        variants.assign(allowed.begin() + 1, allowed.end());
    }
    std::vector<StageChoice> found;
    if (variants.front() != "")
        found.push_back({"auto", {0, 0}});
    for (const auto& name : variants)
        found.push_back({name, {0, 0}});
    for (const auto& name : variants) {
        const ResolvedParams params = name.empty() ? stage.params.copy() : stage.params.with(*variant, name);
        auto plan = stage.plugin->plan(input, params);
        if (!plan)
            continue;
        uint32_t dims = 0; // of the dispatches that leave their work-group size to the daemon
        for (uint32_t d = 0; d < plan->dispatch_count; ++d)
            if (plan->dispatches[d].local_hint[0] == 0)
                dims = std::max(dims, plan->dispatches[d].dims);
        const auto add = [&](const std::array<size_t, 2>& shape) {
            if (shape[0] * std::max<size_t>(shape[1], 1) <= max_work_group_size)
                found.push_back({name, shape});
        };
        if (dims == 2)
            std::for_each(shapes_2d.begin(), shapes_2d.end(), add);
        else if (dims == 1)
            std::for_each(shapes_1d.begin(), shapes_1d.end(), add);
    }
    return found;
}

TunedStage Tuner::tune(const PipelineDefinition& pipeline, size_t stage, const FrameShape& input,
                       const std::function<void(size_t candidate, size_t candidates)>& report,
                       const std::atomic<bool>* cancelled, GpuTurns* turns)
{
    const StageDefinition& definition = pipeline.stages[stage];
    const std::string what = fmt::format("stage {} ({}) on {}", stage + 1, definition.label, pipeline::describe(input));
    const auto logger = log::get("tuner");
    TunedStage best;
    const auto tried = candidates(definition, input, gpu_->capabilities().max_work_group_size);
    report(1, tried.size());
    std::optional<CompileAheadRun> helper;
    if (compile_ahead_) {
        auto started_helper = compile_ahead_->start(pipeline.name, stage, input);
        if (started_helper)
            helper.emplace(std::move(*started_helper));
        else
            logger->warn("{}: cannot compile the candidates ahead ({}); each compiles at its first launch, "
                         "holding the other clients' frames meanwhile",
                         what, started_helper.error().message);
    }
    const auto started = Clock::now();
    Clock::duration compiling{}; // waiting for the helper: not the budget's
    auto last_report = Clock::now();
    auto timer = StageTimer::open(*gpu_, singleStage(pipeline, stage), input, kernel_budget_ns_, turns);
    if (!timer) {
        logger->warn("cannot tune {}: {}", what, timer.error().message);
        return best;
    }
    size_t timed = 0;
    for (const StageChoice& candidate : tried) {
        if (isCancelled(cancelled))
            return {};
        if (timed > 0 && Clock::now() - started - compiling > budget_)
            break;
        ++timed;
        if (helper) {
            const auto waiting = Clock::now();
            helper->resume();
            const bool compiled = helper->waitFor(timed, cancelled);
            helper->pause(); // while this candidate is timed
            compiling += Clock::now() - waiting;
            if (!compiled) {
                if (!isCancelled(cancelled))
                    logger->warn("{}: the candidates from {} on were not compiled ahead; each compiles at its "
                                 "first launch, holding the other clients' frames meanwhile",
                                 what, timed);
                helper.reset();
            }
        }
        if (Clock::now() - last_report >= std::chrono::seconds(1)) {
            report(timed, tried.size());
            last_report = Clock::now();
        }
        auto times = timer->time({candidate}, warmup_frames, timed_frames,
                                 {.hopeless_ns = hopeless * best.gpu_ns, .beat_ns = best.gpu_ns, .cancelled = cancelled});
        if (isCancelled(cancelled))
            return {};
        if (!times) { // a work-group size this kernel cannot take, for one
            logger->debug("{}: candidate {} failed: {}", what, choiceText({candidate, 0}), times.error().message);
            continue;
        }
        const uint64_t ns = median(times->gpu_ns);
        logger->debug("{}: {}", what, choiceText({candidate, ns}));
        if (best.gpu_ns == 0 || ns < best.gpu_ns)
            best = {candidate, ns, 0, median(times->copy_ns) > 0};
    }
    best.complete = timed == tried.size();
    const auto spent = std::chrono::duration<double>(Clock::now() - started).count();
    if (best.gpu_ns == 0)
        logger->warn("cannot tune {}: no candidate ran", what);
    else
        logger->info("tuned {}: {} ({} of {} candidates in {:.1f} s{}{})", what, choiceText(best), timed,
                     tried.size(), spent, helper ? ", each compiled ahead by a helper" : "",
                     timed < tried.size() ? ", the rest over the time budget: not kept in tuning.json" : "");
    return best;
}

std::vector<StageChoice> Tuner::choose(const PipelineDefinition& pipeline, const FrameShape& input,
                                       const std::function<void(const std::string&)>& report,
                                       const std::atomic<bool>* cancelled, GpuTurns* turns)
{
    std::vector<StageChoice> chosen(pipeline.stages.size());
    FrameShape shape = input;
    bool stored = false;
    // Held except while timing: describe() may be asked meanwhile, from another thread.
    std::unique_lock lock(mutex_);
    for (size_t k = 0; k < pipeline.stages.size(); ++k) {
        const StageDefinition& stage = pipeline.stages[k];
        const auto tried = candidates(stage, shape, gpu_->capabilities().max_work_group_size);
        if (tried.size() > 1) {
            const std::string key = stageKey(stage) + "|" + pipeline::describe(shape);
            auto found = choices_.find(key);
            // tuning.json is a file anyone with the cache directory may edit: a choice
            // naming a variant the plugin lacks or a work group the device cannot run
            // would fail every frame, so it is tuned anew instead.
            if (found != choices_.end() && !usable(found->second.choice, tried, gpu_->capabilities().max_work_group_size)) {
                log::get("tuner")->warn("{}: ignoring the cached choice for stage {} ({}): not a variant and "
                                        "work-group size this device can run",
                                        file_.string(), k + 1, stage.label);
                choices_.erase(found);
                found = choices_.end();
            }
            if (found == choices_.end()) {
                lock.unlock();
                TunedStage tuned = tune(pipeline, k, shape, [&](size_t candidate, size_t candidates) {
                    if (report)
                        report(fmt::format("tuning stage {} of {} ({}) for {}: candidate {} of {}", k + 1,
                                           pipeline.stages.size(), stage.label, pipeline::describe(shape),
                                           candidate, candidates));
                }, cancelled, turns);
                lock.lock();
                if (tuned.gpu_ns > 0) {
                    if (choices_.size() >= max_tuning_choices)
                        choices_.erase(std::min_element(choices_.begin(), choices_.end(), [](const auto& a, const auto& b) {
                            return a.second.last_used < b.second.last_used;
                        }));
                    found = choices_.emplace(key, tuned).first;
                    stored = stored || tuned.complete;
                }
            }
            if (found != choices_.end()) {
                found->second.last_used = ++uses_; // written with the next new choice
                chosen[k] = found->second.choice;
            }
        }
        auto next = stage.plugin->negotiate(shape, stage.params);
        if (!next)
            break; // Session::open reports it
        shape = *next;
    }
    if (pipeline.fuse && !isCancelled(cancelled))
        stored = chooseFusion(pipeline, input, chosen, lock, report, cancelled, turns) || stored;
    if (stored)
        save();
    return chosen;
}

bool Tuner::chooseFusion(const PipelineDefinition& pipeline, const FrameShape& input, std::vector<StageChoice>& chosen,
                         std::unique_lock<std::mutex>& lock, const std::function<void(const std::string&)>& report,
                         const std::atomic<bool>* cancelled, GpuTurns* turns)
{
    auto stages = negotiateFormats(pipeline, input, chosen, 0);
    if (!stages)
        return false; // Session::open reports it
    bool stored = false;
    for (const auto& [first, last] : fusableRuns(pipeline, *stages)) {
        const FrameShape shape = (*stages)[first].in;
        std::string choices;
        for (size_t k = first; k <= last; ++k)
            choices += fmt::format("{}{}:{}x{}", k > first ? " " : "", chosen[k].variant, chosen[k].local[0],
                                   chosen[k].local[1]);
        const std::string key = fusionPrefix(pipeline, first, last) + pipeline::describe(shape) + "|" + choices;
        const auto stencils =
            loadsAlternatives(pipeline.stages[last], (*stages)[last], gpu_->capabilities().max_work_group_size);
        auto found = choices_.find(key);
        // As for a stage's choice: an edited tuning.json may say anything.
        if (found != choices_.end() &&
            ((found->second.choice.variant != "fused" && found->second.choice.variant != "unfused") ||
             (!found->second.stencil.variant.empty() &&
              std::none_of(stencils.begin(), stencils.end(), [&](const StageChoice& stencil) {
                  return stencil.variant == found->second.stencil.variant && stencil.local == found->second.stencil.local;
              })))) {
            choices_.erase(found);
            found = choices_.end();
        }
        if (found == choices_.end()) {
            lock.unlock();
            if (report)
                report(fmt::format("timing stages {}-{} of {} fused and unfused for {}", first + 1, last + 1,
                                   pipeline.stages.size(), pipeline::describe(shape)));
            TunedStage timed = timeFusion(pipeline, first, last, shape, chosen, stencils, cancelled, turns);
            lock.lock();
            if (timed.gpu_ns == 0)
                continue; // fused, as it would be without a tuner
            if (choices_.size() >= max_tuning_choices)
                choices_.erase(std::min_element(choices_.begin(), choices_.end(), [](const auto& a, const auto& b) {
                    return a.second.last_used < b.second.last_used;
                }));
            found = choices_.emplace(key, timed).first;
            stored = true;
        }
        found->second.last_used = ++uses_;
        chosen[first].fuse = found->second.choice.variant == "fused";
        if (chosen[first].fuse && !found->second.stencil.variant.empty())
            chosen[last] = found->second.stencil;
    }
    return stored;
}

TunedStage Tuner::timeFusion(const PipelineDefinition& pipeline, size_t first, size_t last, const FrameShape& input,
                             const std::vector<StageChoice>& chosen, const std::vector<StageChoice>& stencils,
                             const std::atomic<bool>* cancelled, GpuTurns* turns)
{
    const auto logger = log::get("tuner");
    const std::string what = fmt::format("stages {}-{} of {} on {}", first + 1, last + 1, pipeline.name,
                                         pipeline::describe(input));
    const auto run = stageRange(pipeline, first, last);
    const std::vector<StageChoice> choices(chosen.begin() + long(first), chosen.begin() + long(last) + 1);
    auto unfused_timer = StageTimer::open(*gpu_, unfused(*run), input, kernel_budget_ns_, turns);
    auto fused_timer = StageTimer::open(*gpu_, run, input, kernel_budget_ns_, turns);
    if (!unfused_timer || !fused_timer) {
        logger->warn("cannot time the fusion of {}: {}", what,
                     (!unfused_timer ? unfused_timer : fused_timer).error().message);
        return {};
    }
    auto unfused_times = unfused_timer->time(choices, warmup_frames, timed_frames, {.cancelled = cancelled});
    if (!unfused_times || isCancelled(cancelled)) {
        if (!isCancelled(cancelled))
            logger->warn("cannot time {} unfused: {}", what, unfused_times.error().message);
        return {};
    }
    const uint64_t unfused_ns = median(unfused_times->gpu_ns);
    // As a candidate that cannot win: fused stops once it cannot beat unfused.
    auto fused_times = fused_timer->time(
        choices, warmup_frames, timed_frames,
        {.hopeless_ns = hopeless * unfused_ns, .beat_ns = unfused_ns, .cancelled = cancelled});
    if (isCancelled(cancelled))
        return {};
    if (!fused_times) {
        logger->warn("cannot time {} fused, so it runs unfused: {}", what, fused_times.error().message);
        return {{"unfused", {0, 0}}, unfused_ns, 0, false, true, 0, {}};
    }
    uint64_t fused_ns = median(fused_times->gpu_ns);
    // The stencil's own choice was timed alone, with its input in memory; another of its
    // variants may load and compute the stages before it faster (docs/architecture.md,
    // "Fusion").
    StageChoice stencil;
    for (const StageChoice& other : stencils) {
        std::vector<StageChoice> with_other = choices;
        with_other.back() = other;
        const uint64_t best = std::min(fused_ns, unfused_ns);
        auto times = fused_timer->time(with_other, warmup_frames, timed_frames,
                                       {.hopeless_ns = hopeless * best, .beat_ns = best, .cancelled = cancelled});
        if (isCancelled(cancelled))
            return {};
        if (!times) {
            logger->debug("{}: fused with stage {} as variant {} failed: {}", what, last + 1, other.variant,
                          times.error().message);
            continue;
        }
        if (const uint64_t ns = median(times->gpu_ns); ns < fused_ns) {
            fused_ns = ns;
            stencil = other;
        }
    }
    const bool fuse = fused_ns <= unfused_ns;
    TunedStage timed{{fuse ? "fused" : "unfused", {0, 0}}, fuse ? fused_ns : unfused_ns, 0, false, true,
                     fuse ? unfused_ns : fused_ns, fuse ? stencil : StageChoice{}};
    logger->info("tuned the fusion of {}: {}", what, fusionText(timed, last + 1));
    return timed;
}

std::vector<std::string> Tuner::describe(const PipelineDefinition& pipeline) const
{
    std::lock_guard lock(mutex_);
    std::vector<std::string> lines;
    for (size_t k = 0; k < pipeline.stages.size(); ++k) {
        const std::string prefix = stageKey(pipeline.stages[k]) + "|";
        for (auto it = choices_.lower_bound(prefix); it != choices_.end() && it->first.starts_with(prefix); ++it)
            lines.push_back(fmt::format("stage {} ({}) on {}: {}", k + 1, pipeline.stages[k].plugin->name(),
                                        it->first.substr(prefix.size()), choiceText(it->second)));
    }
    for (size_t first = 0; first < pipeline.stages.size(); ++first)
        for (size_t last = first + 1; last < pipeline.stages.size(); ++last) {
            const std::string prefix = fusionPrefix(pipeline, first, last);
            std::vector<std::string> names;
            for (size_t k = first; k <= last; ++k)
                names.push_back(pipeline.stages[k].plugin->name());
            for (auto it = choices_.lower_bound(prefix); it != choices_.end() && it->first.starts_with(prefix); ++it) {
                const std::string frame = it->first.substr(prefix.size(), it->first.find('|', prefix.size()) - prefix.size());
                lines.push_back(fmt::format("stages {}-{} ({}) on {}: {}", first + 1, last + 1, fmt::join(names, ", "),
                                            frame, fusionText(it->second, last + 1)));
            }
        }
    return lines;
}

void Tuner::save() const
{
    nlohmann::json choices = nlohmann::json::object();
    for (const auto& [key, tuned] : choices_)
        if (tuned.complete)
            choices[key] = {{"variant", tuned.choice.variant},
                            {"local", tuned.choice.local},
                            {"gpu_ns", tuned.gpu_ns},
                            {"last_used", tuned.last_used},
                            {"copies_input", tuned.copies_input},
                            {"other_ns", tuned.other_ns}};
    for (auto& [key, entry] : choices.items())
        if (const TunedStage& tuned = choices_.at(key); !tuned.stencil.variant.empty()) {
            entry["stencil_variant"] = tuned.stencil.variant;
            entry["stencil_local"] = tuned.stencil.local;
        }
    const nlohmann::json file = {{"format", file_format}, {"choices", choices}};
    std::error_code ec;
    std::filesystem::create_directories(file_.parent_path(), ec);
    if (auto written = writeFileAtomically(file_, file.dump(2) + "\n"); !written)
        log::get("tuner")->warn("tuning choices not kept: {}", written.error().message);
}

} // namespace framecl::pipeline
