#pragma once
// One pipeline opened for one input format and size. Opening it negotiates formats
// stage by stage, asks each plugin for its plan, places every intermediate (on-chip
// where the device and the recording allow, else device buffers shared by lifetime),
// creates every kernel and binds every argument that does not change between frames.
// A frame then changes only the arguments naming its input and output buffers, and
// replays the dispatches the way gpu.recording chose: no device memory is allocated
// and nothing blocks on the frame path (a frame builds only its short list of
// argument updates, three per frame argument and tile).
//
// Under a kernel-time budget (docs/architecture.md, "Scheduling") each dispatch whose
// plan marks an axis tileable is recorded as tiles with global offsets, as many as its
// predicted time needs (pipeline/tile_plan.hpp); the prediction is calibrated at open and
// corrected by each completed frame, and the tiles re-planned when it drifts
// (session_budget.cpp).

#include <array>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "framecl/format.h"
#include "gpu/context.hpp"
#include "gpu/replay.hpp"
#include "pipeline/dispatch_cost.hpp"
#include "pipeline/frame_parameters.hpp"
#include "pipeline/fusion_note.hpp"
#include "pipeline/gpu_turns.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/tile_plan.hpp"

namespace framecl::pipeline {

using FrameShape = framecl_format;

inline bool sameShape(const FrameShape& a, const FrameShape& b)
{
    return a.fourcc == b.fourcc && a.width == b.width && a.height == b.height;
}

// A buffer of the client's (or a host staging buffer) as one frame uses it.
struct FrameBuffer {
    cl_mem mem;
    const framecl_frame_layout* layout;
};

// The dispatches a session records, each dispatch cut into its tiles; defined in
// pipeline/recorded_sequence.hpp.
struct RecordedSequence;
struct RecordedTile;
// What one stage agreed to for the session's input; defined in pipeline/stage_plan.hpp.
struct StagePlan;

// The work of one frame in flight, enqueued part by part (Session::enqueuePart): one
// event per dispatch and tile (recording off), or one per part of the recording. It
// keeps the recorded sequence that ran it alive until it is dropped, since a re-planned
// session records a new one while frames of the old are still in flight.
// What a frame enqueued on one lane (gpu::GpuContext::lane) as one run of commands:
// its last event, and the first session dispatch among its tiles (-1: the buffers'
// acquire and upload, which everything reads after).
struct LaneWork {
    cl::Event end;
    int32_t first_dispatch;
};

struct EnqueuedFrame {
    std::vector<cl::Event> events; // of the parts enqueued so far
    // Under a kernel-time budget, with a recording: a marker enqueued just before each
    // part, which ran from its end to the end of the part's event. (PoCL profiles a
    // command buffer's event as its own closing marker only, not its dispatches.)
    std::vector<cl::Event> part_starts;
    std::shared_ptr<const RecordedSequence> sequence;
    FrameBuffer in{}, out{};
    size_t parts_enqueued = 0;
    // Per lane, what this frame enqueued there, in order; and the lane of its last part.
    std::vector<std::vector<LaneWork>> lane_work;
    uint32_t last_lane = 0;
    // The first client frame of its sequence: it may pay what a driver finishes building
    // at a recording's first enqueue with new buffers (a khr command buffer of its own,
    // a new offset), so it does not teach the prediction.
    bool first_of_sequence = false;
    // The parameters it runs with (Session::changeParameters); null: those of the
    // session's frame before it.
    std::shared_ptr<const ParameterSet> parameters;
    // Where a stage of the session makes statistics (plugin.h, FRAMECL_ARG_STATISTICS):
    // the frame's, read back after its last part (whose event, as enqueuePart returns
    // it, is the read's), complete once that event is.
    std::shared_ptr<framecl_statistics> statistics;

    size_t parts() const;
    bool allEnqueued() const { return parts_enqueued == parts(); }
    // Notes `end` as the end of work on `lane` that holds `first_dispatch` onwards.
    void noteLaneWork(uint32_t lane, cl::Event end, int32_t first_dispatch);
    // What work on `lane` reading session dispatches up to `last_dispatch` waits for:
    // on each other lane, the latest run that holds an earlier dispatch (or the
    // buffers' acquire and upload). A lane is in order, so that run's end follows every
    // run before it there; tiles of one dispatch are independent and need not wait.
    std::vector<cl::Event> dependencies(uint32_t lane, int32_t last_dispatch) const;
    // The latest run on every lane but `lane`: what the frame's end waits for.
    std::vector<cl::Event> otherLanes(uint32_t lane) const;
};

// The kernel-time budget as one stage of a session met it (docs/architecture.md, "Scheduling").
struct StageBudget {
    std::string stage;
    uint32_t tiles = 0;           // in the current plan, all dispatches of the stage
    uint64_t dispatches_run = 0;  // dispatches and tiles of completed frames
    uint64_t overruns = 0;        // those longer than the budget
    uint64_t untileable = 0;      // dispatches run whole, though predicted over budget
    uint64_t longest_ns = 0;      // the longest dispatch or tile
    // Times were estimated from a whole recording's time (the prediction scaled to it)
    // rather than measured per dispatch.
    bool estimated = false;
    // The current prediction of the stage's first dispatch: per work item, and the
    // fixed cost each of its tiles pays besides (DispatchCost).
    double ns_per_item = 0;
    double fixed_ns = 0;
    // Input planes copied into images each frame for the stage's image variant, where no
    // stage wrote them as images (Session::inputCopies).
    uint32_t image_copies = 0;
    // Where the stage is fused (pipeline/fusion.hpp): "stages 3-5 as fused_ccm_tone_color";
    // else why a stage that says it is pointwise is not; else empty.
    std::string fusion;
};

// One dispatch or tile of a completed frame, for a trace.
struct DispatchSlice {
    uint32_t stage;   // index into stageNames(); 0 for a whole recording
    std::string name; // "sobel_3x3", "sobel_3x3 tile 2/5", or "recording"
    uint64_t start_ns, end_ns; // profiling timestamps, on the device clock
};

// How one stage runs, as the tuner chose (pipeline/tuner.hpp) or framecl-bench asks:
// `variant` replaces the value of the plugin's `variant` parameter; `local` is the
// work-group size of each dispatch whose plan leaves it to the daemon. Empty and
// {0, 0}: as configured, and the driver's choice. `fuse`, at the first stage of a run
// that fuses (pipeline/fusion.hpp): false where the tuner timed the run faster unfused.
struct StageChoice {
    std::string variant;
    std::array<size_t, 2> local{0, 0};
    bool fuse = true;
};

struct SessionOptions {
    gpu::RecordingMode recording = gpu::RecordingMode::Off;
    bool onchip_intermediates = true; // used only with the qcom recording
    std::vector<StageChoice> stage_choices; // none, or one per stage
    // The most pixels any frame of the session may have: its input, the output and
    // intermediates a stage negotiates (a scaler may ask for far more than it reads).
    // 0: no limit.
    uint64_t max_frame_pixels = 0;
    // The most device memory the session may allocate for its intermediates, images and
    // its plugins' constants and state (what deviceBytes() reports), checked before it
    // allocates any.
    // 0: no limit.
    uint64_t max_device_bytes = 0;
    // gpu.kernel_budget_ms: every dispatch whose plan marks an axis tileable is cut into
    // tiles along it so that each is predicted to take less than this. 0: dispatches run
    // whole, and nothing is calibrated.
    uint64_t kernel_budget_ns = 0;
    // Predict this many ns per work item for every dispatch instead of calibrating when
    // the session opens (tests; and to force a prediction wrong). Frames still correct it.
    // (Its "{}" lets positional initializers that stop before it pass -Wextra.)
    std::optional<double> assumed_ns_per_item{};
    // The GPU lane at the priority of the client's class (gpu::GpuContext::priorityLane):
    // every part runs there, and a recording is made for it. None: the daemon's lanes.
    std::optional<uint32_t> priority_lane{};
    // Set by another thread once the session is not wanted (its client went away,
    // framecld stops): open() then fails between two pieces of the GPU work it waits
    // for (calibration slices, the recording's first run). Null: never.
    const std::atomic<bool>* cancelled = nullptr;
    // Where the work of the opening (calibration slices, the recording's first run) takes
    // its turn on the GPU (pipeline/gpu_turns.hpp). Null: enqueued at once.
    GpuTurns* turns = nullptr;
};

// Whether `flag` (SessionOptions::cancelled) is set.
inline bool isCancelled(const std::atomic<bool>* flag)
{
    return flag && flag->load(std::memory_order_relaxed);
}
// The error of work stopped so.
inline constexpr const char* cancelled_text = "cancelled: its client went away or framecld is stopping";

class Session {
public:
    static Result<std::unique_ptr<Session>> open(const gpu::GpuContext& gpu,
                                                 std::shared_ptr<const PipelineDefinition> pipeline,
                                                 const FrameShape& input, const SessionOptions& options);
    ~Session();

    const std::string& pipelineName() const { return pipeline_->name; }
    const FrameShape& input() const { return input_; }
    const FrameShape& output() const { return output_; }
    const std::vector<std::string>& stageNames() const { return stage_names_; }
    // What fusion did with the session's stages (pipeline/fusion.hpp), run by run.
    const std::vector<FusionNote>& fusion() const { return fusion_; }
    gpu::RecordingMode recording() const { return recording_; }
    // Intermediates placed in on-chip memory, and the bytes they use there.
    size_t onchipIntermediates() const { return onchip_count_; }
    uint64_t onchipBytes() const { return onchip_bytes_; }
    // Device memory the session allocated: intermediates in device buffers and images,
    // the plugins' constants and state (on-chip memory is not counted: it is not
    // allocated).
    uint64_t deviceBytes() const { return device_bytes_; }
    // Input planes the session copies into images each frame for the stages that read
    // them as images, where no stage wrote them as one (plugin.h).
    uint32_t inputCopies() const;

    // Whether a buffer's layout can carry this session's input (or output) frames.
    Result<void> checkInput(const framecl_frame_layout& layout) const;
    Result<void> checkOutput(const framecl_frame_layout& layout) const;

    // The stages' parameters the session opened with.
    const std::shared_ptr<const ParameterSet>& openParameters() const { return open_parameters_; }
    // `now` with `changes` applied, for frames to begin with: the values checked as
    // pipeline::changeParameters says, against the plans the session recorded. Reads
    // only what open() made, so any thread may call it.
    Result<std::shared_ptr<const ParameterSet>> changeParameters(const ParameterSet& now,
                                                                 std::span<const FrameParameter> changes) const;

    // Starts a frame reading `in` and writing `out`, whose layouts passed the checks
    // above, with `parameters` (null: those of the frame before), and enqueues nothing
    // yet. The dispatches are recorded, and run once, when the session opens; the first
    // frame after the tiles were re-planned records them anew.
    Result<EnqueuedFrame> begin(const FrameBuffer& in, const FrameBuffer& out,
                                std::shared_ptr<const ParameterSet> parameters = nullptr);
    // The GPU lanes its parts may take, the first its home, where a recording is made
    // and enqueue() runs: its priority lane alone where it has one; else the daemon's
    // lanes without a recording, lane 0 alone with one (a recording is bound to the
    // queue it was made for).
    const std::vector<uint32_t>& lanes() const { return lanes_; }
    bool hasLane(uint32_t lane) const;
    const cl::CommandQueue& laneQueue(uint32_t lane) const { return gpu_->lane(lane); }
    // Enqueues the frame's next part on lane `lane` (one of lanes()) and returns at once,
    // with the event that ends the part. Its parts go in order, and the session's next
    // frame begins only once this one's parts are all enqueued or it was abandoned (they
    // share the kernels and intermediates). Where the part's tiles read what another
    // lane's work writes, a barrier waits for it first: an earlier dispatch of the frame,
    // its buffers' acquire and upload, and, for a session with intermediates or
    // state, the previous frame's work, which used them. Before its first part, the
    // parameter blocks the frame's parameters change are written, after the previous
    // frame's work on every lane, which read them.
    Result<cl::Event> enqueuePart(EnqueuedFrame& frame, uint32_t lane);
    // Makes what is enqueued on `lane` after this wait for everything `frame` enqueued on
    // the other lanes: before its last commands (the output's download, the releases).
    Result<void> joinLanes(const EnqueuedFrame& frame, uint32_t lane) const;
    // begin() and every part, on the home lane.
    Result<EnqueuedFrame> enqueue(const FrameBuffer& in, const FrameBuffer& out);

    // Zeroes the plugins' state (plugin.h, framecl_state) before the first part of the
    // next frame whose parts are enqueued: a frame of the session did not run to its end,
    // so the next has no frame before it. Frames already enqueued keep theirs.
    void resetState();

    // The predicted GPU time of part `part` of `frame`; 0 while some dispatch of it has
    // no prediction (no budget, and no frame measured yet).
    uint64_t predictedNs(const EnqueuedFrame& frame, size_t part) const;
    // The same of the first part of the next frame to begin; 0 where it is to be
    // recorded anew.
    uint64_t predictedFirstPartNs() const;
    // The profiled GPU time of part `part` of `frame`, once it completed (with lanes, the
    // time it had the device to itself after the part before it); 0 where its events
    // carry no profiling or the device is timed by the host's clock.
    uint64_t partNs(const EnqueuedFrame& frame, size_t part) const;

    // Tells the session that `frame` completed, `wall_ns` after it was enqueued: its
    // times correct the cost predictions and count in budgetStats(). With one event per
    // dispatch the times are each tile's own; with one for a recording, every prediction
    // is scaled by the recording's time over its predicted time (the profiled time, or
    // `wall_ns` where the event carries none). A device timed by the host's clock
    // (gpu/timestamps.hpp) is treated as one recording timed by `wall_ns`. A dispatch whose prediction drifted more
    // than 2x from what its tiles were planned with is re-planned, and the next frame
    // records the new tiles. Call it on the thread that enqueues.
    void frameCompleted(const EnqueuedFrame& frame, uint64_t wall_ns);

    // The budget per stage, in stage order, over the frames passed to frameCompleted.
    std::vector<StageBudget> budgetStats() const;

    // GPU time of each stage of a completed frame: one entry per stage when each
    // dispatch has its own event (its tiles summed); one entry, "recording", when the
    // frame ran as one recording; none on a device timed by the host's clock.
    std::vector<std::pair<std::string, uint64_t>> stageTimes(const EnqueuedFrame& frame) const;

    // The GPU time of a completed frame's copies of input planes into images
    // (inputCopies()), a part of its stages' times; 0 where its events are not per
    // dispatch.
    uint64_t inputCopyNs(const EnqueuedFrame& frame) const;

    // The profiled dispatches and tiles of a completed frame, in order; those whose
    // event carries no profiling are left out.
    std::vector<DispatchSlice> dispatchSlices(const EnqueuedFrame& frame) const;

    // The GPU time of a completed frame: its events' profiled durations summed; 0 when
    // none carries profiling, or the device is timed by the host's clock.
    uint64_t gpuNs(const EnqueuedFrame& frame) const;

private:
    // Three consecutive kernel arguments (buffer, plane offset, plane stride) that the
    // frame's input or output buffer fills.
    struct FrameArg {
        uint32_t dispatch;
        cl_uint index;
        bool output;
        uint32_t plane;
    };

    // One dispatch of a stage's plan, whole, with its prediction and its current tiles.
    struct PlannedDispatch {
        gpu::ReplayDispatch whole;
        DispatchShape shape;
        uint32_t stage;
        std::string kernel; // the kernel's name, for trace slices
        DispatchCost cost;
        std::vector<Tile> tiles; // the whole dispatch as one tile when not cut
        bool input_copy = false; // the daemon's copy of an input plane into an image
    };

    // An intermediate as the session binds it: the whole packed frame of `format`,
    // alive from session dispatch `first` to `last`.
    // An image instead (plugin.h, the *_IMAGE kinds) holds plane `plane` of `format`.
    struct Intermediate {
        framecl_format format;
        framecl_frame_layout layout{};
        uint64_t bytes = 0;
        uint32_t first = 0;
        uint32_t last = 0;
        bool onchip = false;
        bool image = false;
        uint32_t plane = 0;
    };
    // A plugin's buffer kept from frame to frame, packed in `layout`.
    struct State {
        cl::Buffer buffer;
        framecl_frame_layout layout;
        uint64_t bytes;
    };
    // Three consecutive kernel arguments (buffer, plane offset, plane stride) that an
    // intermediate fills.
    struct IntermediateArg {
        uint32_t dispatch;
        cl_uint index;
        uint32_t intermediate;
        uint32_t plane;
    };

    // What frameCompleted counted for one stage.
    struct StageCounters {
        uint64_t dispatches_run = 0;
        uint64_t overruns = 0;
        uint64_t untileable = 0;
        uint64_t longest_ns = 0;
        bool estimated = false;
    };

    // One session dispatch as planned, before its kernel is made (session.cpp).
    struct StageDispatch;

    // Keeps what the session needs of `options`; the steps of open() make the rest.
    Session(const gpu::GpuContext& gpu, std::shared_ptr<const PipelineDefinition> pipeline, FrameShape input,
            FrameShape output, const SessionOptions& options);

    // The steps of open(), in order.
    // Lists the intermediates (each stage's output read by the next, the plans' own, and
    // the images input planes are copied into) and each stage's dispatches, each
    // argument with the intermediate it binds.
    Result<std::vector<std::vector<StageDispatch>>> planDispatches(const std::vector<StagePlan>& stages);
    // Sets each intermediate's live range from the dispatches that bind it.
    void planLiveRanges(const std::vector<std::vector<StageDispatch>>& dispatches);
    // lanes(), for the client's priority lane, if any.
    Result<void> assignLanes(std::optional<uint32_t> priority_lane);
    // Counts the plans' constants and state in fixed_bytes_ and checks max_device_bytes;
    // returns each state's packed layout, in stage order.
    Result<std::vector<framecl_frame_layout>> sizeConstantsAndState(const std::vector<StagePlan>& stages);
    // Creates the intermediates that are images, once: they are never shared or placed
    // on-chip. Checks max_device_bytes first, with the constants.
    Result<void> makeImages();
    // Creates each stage's state, constants and parameter block, then the kernels of the
    // dispatches, with every argument that no frame changes bound but the intermediates,
    // bound where they are placed (placeIntermediates).
    Result<void> makeKernels(const std::vector<StagePlan>& stages,
                             const std::vector<std::vector<StageDispatch>>& dispatches,
                             const std::vector<framecl_frame_layout>& state_layouts);
    // Seeds every dispatch's prediction: SessionOptions::assumed_ns_per_item where set;
    // else, under a budget, by calibrate() with every intermediate placed in device
    // memory; else none, until frames measure it. Returns whether it calibrated, and so
    // placed them.
    Result<bool> seedPredictions(const SessionOptions& options);
    // Cuts each dispatch into tiles for its prediction under the budget.
    void planAllTiles();
    // Places the intermediates for the parts the recording will be cut into
    // (planOnchipRuns), unless the calibration's placement, all in device memory, is
    // that already.
    Result<void> placeForParts(bool calibrated);
    // Records the sequence on stand-ins for the client's buffers and runs it once, so
    // that the first frame finds it recorded and the driver's work for it done.
    Result<void> recordAhead(const std::atomic<bool>* cancelled, GpuTurns* turns);

    // What the steps use.
    // Creates stage k's state buffers, from state_layouts[states_.size()] on.
    Result<void> makeStates(size_t k, const framecl_plan& plan,
                            const std::vector<framecl_frame_layout>& state_layouts);
    // Creates stage k's constants, each filled from its plan.
    Result<void> makeConstants(size_t k, const framecl_plan& plan);
    // Adds stage k's parameter block to param_blocks_, filled with `block`; an empty
    // buffer where the stage has none.
    Result<void> makeParamBlock(size_t k, const std::vector<uint8_t>& block);
    // Creates the statistics buffer where stage k's plan binds it; refuses a second stage
    // that does.
    Result<void> makeStatistics(size_t k, const framecl_plan& plan);
    // Enqueues on `lane` the read of the frame's statistics, after its work on every
    // lane; returns the read's event.
    Result<cl::Event> readStatistics(EnqueuedFrame& frame, uint32_t lane);
    // Keeps each stage's plan and parameters, to check changes against and as the
    // values the blocks hold.
    void keepParameters(std::vector<StagePlan>&& stages);
    // Enqueues on `lane` a write of each parameter block whose bytes `next` changes.
    Result<void> writeParameters(const std::shared_ptr<const ParameterSet>& next, uint32_t lane);
    // Creates the kernel of one of stage k's dispatches, binds its arguments and adds it
    // to dispatches_, whole. The stage's states and constants start at `state_base` and
    // `constant_base`.
    Result<void> addDispatch(size_t k, const StageDispatch& planned, const StageChoice& choice, size_t state_base,
                             size_t constant_base);
    // Binds the arguments of session dispatch `index` that no frame changes, and notes
    // those the frame's buffers and the intermediates fill; returns its local-memory
    // arguments (index, bytes). A FRAMECL_ARG_PARAMS argument binds the parameter block of
    // stage k + its index (0 but in a fused run's dispatch, pipeline/fusion.hpp).
    Result<std::vector<std::pair<cl_uint, size_t>>> bindArguments(const cl::Kernel& kernel, const std::string& name,
                                                                  uint32_t index, const StageDispatch& planned,
                                                                  size_t state_base, size_t constant_base, size_t k);
    // Seeds every prediction by calibrateCost on scratch frames (session_budget.cpp).
    Result<void> calibrate(const std::atomic<bool>* cancelled, GpuTurns* turns);
    // Allocates the buffer intermediates where `placement` puts them, in place of any
    // allocated before, and binds them to the kernels; checks max_device_bytes first.
    Result<void> placeIntermediates(const std::vector<bool>& onchip_allowed);
    // With the qcom recording, groups the stages into runs that each go to the GPU as
    // one part: consecutive stages predicted together within the budget's target and
    // a recording's capacity (a stage over either alone is a run that is cut at its
    // tiles). Returns which intermediates may live on-chip: those alive within one run
    // that is not cut; all where nothing is cut; none without on-chip memory
    // (docs/architecture.md, "Scheduling").
    std::vector<bool> planOnchipRuns();

    // The frame's arguments for the recorded dispatches [first, end), numbered from
    // `first`: `first_tile[d]` up to `first_tile[d + 1]` are the recorded dispatches of
    // session dispatch d. By default every recorded dispatch.
    std::vector<gpu::ArgUpdate> frameUpdates(const FrameBuffer& in, const FrameBuffer& out,
                                             const std::vector<uint32_t>& first_tile, uint32_t first = 0,
                                             uint32_t end = UINT32_MAX) const;
    // How a part may end after recorded tile `before` and the next begin with `after`.
    Cut cutBetween(const RecordedTile& before, const RecordedTile& after) const;
    // The most dispatches one recording holds: CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE under
    // the qcom recording; 0 (no limit) otherwise.
    uint32_t recordingCapacity() const;
    // Records the current tiles for the recording mode, in parts, with `in` and `out`
    // bound.
    Result<std::shared_ptr<RecordedSequence>> record(const FrameBuffer& in, const FrameBuffer& out) const;
    uint64_t predictedNs(const RecordedSequence& sequence, size_t part) const;
    // Counts one dispatch or tile of `stage` that took `ns` in budgetStats().
    void countDispatch(uint32_t stage, uint64_t ns, bool estimated);

    const gpu::GpuContext* gpu_;
    std::shared_ptr<const PipelineDefinition> pipeline_;
    FrameShape input_;
    FrameShape output_{};
    std::vector<std::string> stage_names_;
    std::vector<cl::Buffer> constants_;     // the plans' constants
    std::vector<cl::Buffer> param_blocks_;  // each stage's parameter block, or none (plugin.h, param_block)
    cl::Buffer statistics_;                  // a framecl_statistics, where a stage makes them
    std::optional<size_t> statistics_stage_; // the stage that does
    std::vector<StageParameterCheck> parameter_checks_; // one per stage
    std::shared_ptr<const ParameterSet> open_parameters_;
    std::shared_ptr<const ParameterSet> written_parameters_; // what the blocks hold, or will once written
    // Writes not yet seen complete, with the bytes they read, kept alive until then.
    std::vector<std::pair<cl::Event, std::shared_ptr<const ParameterSet>>> parameter_writes_;
    std::vector<Intermediate> intermediates_;
    std::vector<IntermediateArg> intermediate_args_;
    std::vector<cl::Buffer> intermediate_buffers_; // device buffers and on-chip views
    std::map<uint32_t, cl::Image2D> images_;      // by intermediate
    uint64_t image_bytes_ = 0;
    std::vector<FusionNote> fusion_;
    uint64_t fixed_bytes_ = 0; // the plans' constants and state, allocated at open
    std::vector<State> states_; // every stage's, in stage order
    bool state_reset_pending_ = false; // resetState(): zeroed before the next frame
    uint64_t max_device_bytes_ = 0;
    bool onchip_intermediates_ = false; // the qcom recording and the option
    std::vector<uint32_t> run_of_stage_; // planOnchipRuns(); empty: one run
    std::vector<FrameArg> frame_args_;
    // Kept after recording: a re-plan records them anew.
    std::vector<PlannedDispatch> dispatches_;
    gpu::RecordingMode recording_ = gpu::RecordingMode::Off;
    std::vector<uint32_t> lanes_; // lanes(): at least one
    uint64_t kernel_budget_ns_ = 0;
    std::shared_ptr<RecordedSequence> sequence_; // none before the first frame and after a re-plan
    // The last frame's latest work on each GPU lane: a session with intermediates or
    // state starts its next frame after it on the other lanes, since both use them.
    std::vector<std::optional<cl::Event>> last_frame_work_;
    std::vector<StageCounters> stage_counters_;  // one per stage
    size_t onchip_count_ = 0;
    uint64_t onchip_bytes_ = 0;
    uint64_t device_bytes_ = 0;
};

} // namespace framecl::pipeline
