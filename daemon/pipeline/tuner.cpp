#include "pipeline/tuner.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "base/read_file.hpp"
#include "base/write_file.hpp"
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
    if (stored)
        save();
    return chosen;
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
                            {"copies_input", tuned.copies_input}};
    const nlohmann::json file = {{"format", file_format}, {"choices", choices}};
    std::error_code ec;
    std::filesystem::create_directories(file_.parent_path(), ec);
    if (auto written = writeFileAtomically(file_, file.dump(2) + "\n"); !written)
        log::get("tuner")->warn("tuning choices not kept: {}", written.error().message);
}

} // namespace framecl::pipeline
