// The kernel-time budget of a session (docs/architecture.md, "Scheduling"): the calibration
// that seeds each dispatch's cost prediction, the tile plan made from it, the frames'
// times that correct it and re-plan the tiles when it drifts, and the statistics and
// trace slices of completed frames.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "base/log.hpp"
#include "gpu/cl_error.hpp"
#include "pipeline/calibration.hpp"
#include "pipeline/recorded_sequence.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {
namespace {

// A device buffer of `bytes` for calibration: a camera-like frame for an input, or
// undefined content for an output.
Result<cl::Buffer> scratchBuffer(const gpu::GpuContext& gpu, uint64_t bytes, bool camera_like)
{
    std::vector<uint8_t> content = camera_like ? cameraLikeFrame(bytes) : std::vector<uint8_t>{};
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer(gpu.context(), CL_MEM_READ_WRITE | (camera_like ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                      camera_like ? content.data() : nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, fmt::format("a calibration frame of {} bytes", bytes)));
    return buffer;
}

// Sets every update on the whole dispatch it names (not a recording's tile: the
// calibration runs the session's own kernels).
template <typename Dispatches>
Result<void> bindUpdates(const Dispatches& dispatches, const std::vector<gpu::ArgUpdate>& updates)
{
    for (const gpu::ArgUpdate& update : updates) {
        const gpu::ReplayDispatch& whole = dispatches[update.dispatch].whole;
        if (cl_int err = clSetKernelArg(whole.kernel(), update.arg_index, update.size, update.value.data());
            err != CL_SUCCESS)
            return fail(gpu::clFailure("clSetKernelArg", err, fmt::format("{} argument {}", whole.name,
                                                                           update.arg_index)));
    }
    return {};
}

// Whether each recorded dispatch of `frame` has its own event (recording off).
bool eventsPerTile(const EnqueuedFrame& frame)
{
    return frame.sequence && frame.sequence->events_per_tile && frame.events.size() == frame.sequence->tiles.size();
}

// The time each recorded dispatch of `frame` (recording off) had the device to itself
// as far as the frame goes: from its start, or the end of the frame's dispatches before
// it if later, to its end. On one lane that is its span. The tiles of one dispatch
// alternate between lanes and overlap (gpu::GpuContext::lane), the tail of one with the
// start of the next; the overlap counts once, so that the times add up to the frame's
// time on the device and each tile's is the throughput it cost. None where a dispatch
// carries no profiling, or `gpu` times with the host's clock. Only the dispatches
// [from, to) are read, the other entries left empty.
std::vector<std::optional<uint64_t>> tileNs(const gpu::GpuContext& gpu, const EnqueuedFrame& frame, size_t from = 0,
                                            size_t to = SIZE_MAX)
{
    std::vector<std::optional<uint64_t>> ns(frame.events.size());
    uint64_t ended = 0;
    for (size_t i = from; i < std::min(to, frame.events.size()); ++i) {
        const auto span = gpu.profiledSpan(frame.events[i]);
        if (!span)
            continue;
        const uint64_t from = std::max(span->start_ns, ended);
        ns[i] = span->end_ns > from ? span->end_ns - from : 0;
        ended = std::max(ended, span->end_ns);
    }
    return ns;
}

// The profiled span of part `part` of a frame that ran as a recording: from the end of
// the marker enqueued before it, where there is one, to the end of the part's event.
std::optional<gpu::ProfiledSpan> partSpan(const gpu::GpuContext& gpu, const EnqueuedFrame& frame, size_t part)
{
    if (part >= frame.events.size())
        return std::nullopt;
    auto span = gpu.profiledSpan(frame.events[part]);
    if (!span || part >= frame.part_starts.size())
        return span;
    if (const auto start = gpu.profiledSpan(frame.part_starts[part]); start && start->end_ns <= span->end_ns)
        span->start_ns = std::min(span->start_ns, start->end_ns);
    return span;
}

// The parts' spans of a frame that ran as a recording, summed; 0 where one carries no
// profiling.
uint64_t recordedNs(const gpu::GpuContext& gpu, const EnqueuedFrame& frame)
{
    uint64_t total = 0;
    for (size_t part = 0; part < frame.events.size(); ++part) {
        const auto span = partSpan(gpu, frame, part);
        if (!span)
            return 0;
        total += span->ns();
    }
    return total;
}

// The tiles of a dispatch of `shape` predicted at `cost` under `budget_ns` on `gpu`: each
// tile's work items within what the target leaves after its fixed cost.
std::vector<Tile> tilesFor(const DispatchShape& shape, const DispatchCost& cost, uint64_t budget_ns,
                           const gpu::Capabilities& gpu)
{
    return planTiles(shape, double(workItems(shape.global)) * cost.ns_per_item,
                     tileWorkTarget(tileTarget(budget_ns), cost.fixed_ns),
                     fillItems(gpu.type == gpu::DeviceType::Gpu, gpu.max_compute_units, gpu.max_work_group_size));
}

} // namespace

Result<void> Session::calibrate(const std::atomic<bool>* cancelled, GpuTurns* turns)
{
    framecl_frame_layout in_layout{}, out_layout{};
    const uint64_t in_bytes = framecl_packed_layout(input_.fourcc, input_.width, input_.height, &in_layout);
    const uint64_t out_bytes = framecl_packed_layout(output_.fourcc, output_.width, output_.height, &out_layout);
    if (in_bytes == 0 || out_bytes == 0)
        return fail(fmt::format("no packed layout for {} or {}", describe(input_), describe(output_)));
    auto input = scratchBuffer(*gpu_, in_bytes, true);
    if (!input)
        return tl::unexpected(input.error());
    auto output = scratchBuffer(*gpu_, out_bytes, false);
    if (!output)
        return tl::unexpected(output.error());

    // Each session dispatch is its own "tile" here.
    std::vector<uint32_t> untiled(dispatches_.size() + 1);
    std::iota(untiled.begin(), untiled.end(), 0u);
    if (auto bound = bindUpdates(dispatches_, frameUpdates({(*input)(), &in_layout}, {(*output)(), &out_layout},
                                                           untiled));
        !bound)
        return bound;
    for (PlannedDispatch& planned : dispatches_) {
        if (isCancelled(cancelled))
            return fail(cancelled_text);
        auto fit = calibrateCost(*gpu_, turns, planned.whole, planned.shape, kernel_budget_ns_);
        if (!fit)
            return tl::unexpected(fit.error());
        planned.cost.fixed_ns = fit->fixed_ns;
        planned.cost.ns_per_item = fit->ns_per_item;
    }
    // The scratch buffers go with this scope: leave no kernel naming them (a null
    // buffer argument is valid OpenCL; the first frame binds its own).
    return bindUpdates(dispatches_, frameUpdates({nullptr, &in_layout}, {nullptr, &out_layout}, untiled));
}

void Session::planAllTiles()
{
    for (PlannedDispatch& planned : dispatches_) {
        planned.cost.planned_ns_per_item = planned.cost.ns_per_item;
        planned.tiles = tilesFor(planned.shape, planned.cost, kernel_budget_ns_, gpu_->capabilities());
    }
}

uint32_t Session::recordingCapacity() const
{
    return recording_ == gpu::RecordingMode::Qcom ? uint32_t(std::min<uint64_t>(
                                                        gpu_->capabilities().recordable_queue_max_size, UINT32_MAX))
                                                  : 0;
}

void Session::countDispatch(uint32_t stage, uint64_t ns, bool estimated)
{
    StageCounters& counters = stage_counters_[stage];
    ++counters.dispatches_run;
    if (kernel_budget_ns_ > 0 && ns > kernel_budget_ns_)
        ++counters.overruns;
    counters.longest_ns = std::max(counters.longest_ns, ns);
    counters.estimated = counters.estimated || estimated;
}

void Session::frameCompleted(const EnqueuedFrame& frame, uint64_t wall_ns)
{
    const RecordedSequence* sequence = frame.sequence.get();
    if (!sequence || dispatches_.empty())
        return;
    const auto& tiles = sequence->tiles;

    // Dispatches run whole though predicted over budget, by the prediction they ran with.
    for (uint32_t d = 0; d < dispatches_.size(); ++d) {
        const PlannedDispatch& planned = dispatches_[d];
        const double predicted = planned.cost.tileNs(workItems(planned.shape.global));
        if (kernel_budget_ns_ > 0 && !tileAxis(planned.shape) && predicted > double(kernel_budget_ns_))
            ++stage_counters_[planned.stage].untileable;
    }

    // What this frame measured per dispatch: ns per work item, and whether a tile of it
    // ran over the budget.
    std::vector<double> measured_per_item(dispatches_.size(), 0);
    std::vector<bool> overran(dispatches_.size(), false);
    const auto count = [&](uint32_t d, uint64_t ns, bool estimated) {
        countDispatch(dispatches_[d].stage, ns, estimated);
        overran[d] = overran[d] || (kernel_budget_ns_ > 0 && ns > kernel_budget_ns_);
    };
    if (eventsPerTile(frame) && gpu_->clock().device()) {
        // Each tile's own time; each dispatch learns its tiles' ns per item.
        std::vector<uint64_t> ns(dispatches_.size(), 0), items(dispatches_.size(), 0), timed(dispatches_.size(), 0);
        const auto tile_ns = tileNs(*gpu_, frame);
        for (size_t i = 0; i < tiles.size(); ++i) {
            if (!tile_ns[i])
                continue;
            count(tiles[i].dispatch, *tile_ns[i], false);
            ns[tiles[i].dispatch] += *tile_ns[i];
            items[tiles[i].dispatch] += tiles[i].items;
            ++timed[tiles[i].dispatch];
        }
        for (size_t d = 0; d < dispatches_.size(); ++d)
            measured_per_item[d] = dispatches_[d].cost.perItem(ns[d], timed[d], items[d]);
    } else {
        // One time for the whole frame (a recording, or any frame timed by the host's
        // clock: `wall_ns`, its parts' time on the GPU's queue): the tiles' fixed costs taken off, every
        // per-item prediction scaled by how far off their sum was, and each tile's time
        // estimated as its fixed cost and its scaled work. A frame shorter than its fixed
        // costs alone (a fixed cost fitted too high) teaches no per-item cost, and its
        // tiles are counted at their whole predictions scaled to what it took.
        const uint64_t recorded = recordedNs(*gpu_, frame);
        const uint64_t measured = recorded > 0 ? recorded : wall_ns;
        double fixed = 0, predicted_work = 0;
        for (const RecordedTile& tile : tiles) {
            fixed += dispatches_[tile.dispatch].cost.fixed_ns;
            predicted_work += double(tile.items) * dispatches_[tile.dispatch].cost.ns_per_item;
        }
        if (measured == 0 || !(predicted_work > 0))
            return; // nothing to scale, or no prediction to scale
        const bool past_fixed = double(measured) > fixed;
        const double work_scale = past_fixed ? (double(measured) - fixed) / predicted_work : 0;
        const double whole_scale = double(measured) / (fixed + predicted_work);
        for (const RecordedTile& tile : tiles) {
            const DispatchCost& cost = dispatches_[tile.dispatch].cost;
            const double work = double(tile.items) * cost.ns_per_item;
            count(tile.dispatch,
                  uint64_t(past_fixed ? cost.fixed_ns + work * work_scale : (cost.fixed_ns + work) * whole_scale),
                  true);
        }
        for (size_t d = 0; d < dispatches_.size(); ++d)
            measured_per_item[d] = dispatches_[d].cost.ns_per_item * work_scale; // 0: nothing learnt
    }
    if (frame.first_of_sequence)
        return;
    for (size_t d = 0; d < dispatches_.size(); ++d)
        dispatches_[d].cost.learn(measured_per_item[d]);

    // Re-plan the dispatches whose prediction drifted, and at once those whose tiles ran
    // over the budget in overruns_to_replan frames in a row — for what those frames
    // measured, since the budget bounds the worst dispatch and the average would catch
    // up only over several frames; a lone slow frame is an outlier. A changed plan is
    // recorded at the next frame, while frames of the old sequence finish with their
    // own.
    if (kernel_budget_ns_ == 0)
        return;
    std::vector<std::vector<Tile>> was; // every dispatch's tiles, kept at the first change
    for (size_t d = 0; d < dispatches_.size(); ++d) {
        PlannedDispatch& planned = dispatches_[d];
        const bool over_again = planned.cost.noteOverrun(overran[d], measured_per_item[d]);
        if (!planned.cost.drifted() && !over_again)
            continue;
        planned.cost.planned_ns_per_item = planned.cost.ns_per_item;
        auto retiled = tilesFor(planned.shape, planned.cost, kernel_budget_ns_, gpu_->capabilities());
        if (retiled == planned.tiles)
            continue;
        if (was.empty())
            for (const PlannedDispatch& each : dispatches_)
                was.push_back(each.tiles);
        planned.tiles = std::move(retiled);
    }
    if (was.empty())
        return;
    bool replanned = false;
    for (size_t d = 0; d < dispatches_.size(); ++d) {
        const PlannedDispatch& planned = dispatches_[d];
        if (planned.tiles == was[d])
            continue;
        log::get("pipeline")
            ->debug("{}: {:.3g} ns per work item; {} tiles, were {}", planned.whole.name, planned.cost.ns_per_item,
                    planned.tiles.size(), was[d].size());
        replanned = true;
    }
    if (replanned)
        sequence_.reset();
}

std::vector<StageBudget> Session::budgetStats() const
{
    std::vector<StageBudget> stats;
    for (size_t k = 0; k < stage_names_.size(); ++k) {
        const StageCounters& counters = stage_counters_[k];
        stats.push_back({stage_names_[k], 0, counters.dispatches_run, counters.overruns, counters.untileable,
                         counters.longest_ns, counters.estimated, 0, 0, 0, {}});
    }
    for (auto planned = dispatches_.rbegin(); planned != dispatches_.rend(); ++planned) {
        // Backwards, so that the stage's first dispatch gives the prediction.
        stats[planned->stage].tiles += uint32_t(planned->tiles.size());
        stats[planned->stage].ns_per_item = planned->cost.ns_per_item;
        stats[planned->stage].fixed_ns = planned->cost.fixed_ns;
        stats[planned->stage].image_copies += planned->input_copy;
    }
    for (const FusionNote& note : fusion_)
        for (uint32_t k = note.first; k <= note.last; ++k)
            stats[k].fusion = note.fused ? fmt::format("stages {}-{} as {}", note.first + 1, note.last + 1, note.what)
                                         : fmt::format("not fused: {}", note.what);
    return stats;
}

std::vector<std::pair<std::string, uint64_t>> Session::stageTimes(const EnqueuedFrame& frame) const
{
    if (!gpu_->clock().device())
        return {};
    if (!eventsPerTile(frame))
        return {{"recording", gpuNs(frame)}};
    std::vector<std::pair<std::string, uint64_t>> times;
    for (const auto& name : stage_names_)
        times.emplace_back(name, 0);
    const auto tile_ns = tileNs(*gpu_, frame);
    for (size_t i = 0; i < tile_ns.size(); ++i)
        if (tile_ns[i])
            times[dispatches_[frame.sequence->tiles[i].dispatch].stage].second += *tile_ns[i];
    return times;
}

uint32_t Session::inputCopies() const
{
    return uint32_t(std::count_if(dispatches_.begin(), dispatches_.end(),
                                  [](const PlannedDispatch& planned) { return planned.input_copy; }));
}

uint64_t Session::inputCopyNs(const EnqueuedFrame& frame) const
{
    if (!eventsPerTile(frame))
        return 0;
    uint64_t total = 0;
    const auto tile_ns = tileNs(*gpu_, frame);
    for (size_t i = 0; i < tile_ns.size(); ++i)
        if (tile_ns[i] && dispatches_[frame.sequence->tiles[i].dispatch].input_copy)
            total += *tile_ns[i];
    return total;
}

std::vector<DispatchSlice> Session::dispatchSlices(const EnqueuedFrame& frame) const
{
    std::vector<DispatchSlice> slices;
    if (!eventsPerTile(frame)) {
        const size_t parts = frame.events.size();
        for (size_t part = 0; part < parts; ++part)
            if (const auto span = partSpan(*gpu_, frame, part)) {
                const uint32_t first_tile = frame.sequence->parts[part].first;
                slices.push_back({dispatches_[frame.sequence->tiles[first_tile].dispatch].stage,
                                  parts > 1 ? fmt::format("recording part {}/{}", part + 1, parts) : "recording",
                                  span->start_ns, span->end_ns});
            }
        return slices;
    }
    for (size_t i = 0; i < frame.events.size(); ++i) {
        const auto span = gpu_->profiledSpan(frame.events[i]);
        if (!span)
            continue;
        const RecordedTile& tile = frame.sequence->tiles[i];
        const PlannedDispatch& planned = dispatches_[tile.dispatch];
        std::string name = tile.count > 1 ? fmt::format("{} tile {}/{}", planned.kernel, tile.index + 1, tile.count)
                                          : planned.kernel;
        slices.push_back({planned.stage, std::move(name), span->start_ns, span->end_ns});
    }
    return slices;
}

uint64_t Session::gpuNs(const EnqueuedFrame& frame) const
{
    if (!eventsPerTile(frame))
        return recordedNs(*gpu_, frame);
    uint64_t total = 0;
    for (const auto& ns : tileNs(*gpu_, frame))
        total += ns.value_or(0);
    return total;
}

uint64_t Session::predictedNs(const EnqueuedFrame& frame, size_t part) const
{
    return predictedNs(*frame.sequence, part);
}

uint64_t Session::predictedFirstPartNs() const
{
    return sequence_ ? predictedNs(*sequence_, 0) : 0;
}

uint64_t Session::predictedNs(const RecordedSequence& sequence, size_t part) const
{
    const RecordedPart& range = sequence.parts.at(part);
    double total = 0;
    for (uint32_t t = range.first; t < range.end; ++t) {
        const RecordedTile& tile = sequence.tiles[t];
        const DispatchCost& cost = dispatches_[tile.dispatch].cost;
        if (!(cost.ns_per_item > 0))
            return 0;
        total += cost.tileNs(tile.items);
    }
    return uint64_t(total);
}

uint64_t Session::partNs(const EnqueuedFrame& frame, size_t part) const
{
    if (!frame.sequence->events_per_tile) {
        const auto span = partSpan(*gpu_, frame, part);
        return span ? span->ns() : 0;
    }
    // From the part before it, which on two lanes it overlaps: each part's completion
    // reads a few parts' events, not the whole frame's (up to 4096 tiles).
    const RecordedPart& range = frame.sequence->parts.at(part);
    const auto tile_ns = tileNs(*gpu_, frame, part > 0 ? frame.sequence->parts[part - 1].first : range.first, range.end);
    uint64_t total = 0;
    for (uint32_t t = range.first; t < range.end && t < tile_ns.size(); ++t)
        total += tile_ns[t].value_or(0);
    return total;
}

} // namespace framecl::pipeline
