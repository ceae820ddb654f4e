#include "pipeline/session.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "base/log.hpp"
#include "gpu/cl_error.hpp"
#include "gpu/vendor_extensions.hpp"
#include "memory/intermediate_planner.hpp"
#include "pipeline/fusion.hpp"
#include "pipeline/plane_image.hpp"
#include "pipeline/recorded_sequence.hpp"
#include "pipeline/stage_plan.hpp"

namespace framecl::pipeline {
namespace {

namespace fs = std::filesystem;

// On-chip intermediates start on cache-line multiples: the guide gives no stricter rule
// for CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM, and a line keeps two buffers' writes apart.
constexpr uint64_t onchip_alignment = 128;

Result<void> setArg(const cl::Kernel& kernel, const std::string& name, cl_uint index, size_t size, const void* value)
{
    // Not cl::Kernel::setArg: for a pointer type such as cl_mem it picks the SVM
    // overload (clSetKernelArgSVMPointer) when built for OpenCL 2.0 and later.
    if (cl_int err = clSetKernelArg(kernel(), index, size, value); err != CL_SUCCESS)
        return fail(gpu::clFailure("clSetKernelArg", err, fmt::format("{} argument {}", name, index)));
    return {};
}

Result<void> setPlaneArgs(const cl::Kernel& kernel, const std::string& name, cl_uint index, cl_mem mem,
                          const framecl_plane& plane)
{
    const cl_uint offset = plane.offset, stride = plane.stride;
    if (auto r = setArg(kernel, name, index, sizeof mem, &mem); !r)
        return r;
    if (auto r = setArg(kernel, name, index + 1, sizeof offset, &offset); !r)
        return r;
    return setArg(kernel, name, index + 2, sizeof stride, &stride);
}

gpu::ArgUpdate update(uint32_t dispatch, cl_uint index, const void* value, size_t size, bool buffer = false)
{
    gpu::ArgUpdate u{dispatch, index, size, {}, buffer};
    std::memcpy(u.value.data(), value, size);
    return u;
}

Result<void> checkShape(const framecl_frame_layout& layout, const FrameShape& wanted, const char* role)
{
    const FrameShape shape{layout.fourcc, layout.width, layout.height};
    if (sameShape(shape, wanted))
        return {};
    return fail(fmt::format("{} buffer holds {}, the session {} {}", role, describe(shape),
                            role[0] == 'i' ? "reads" : "writes", describe(wanted)));
}

// The built-in copy of input plane `plane` into the image the stage reads it from:
// (src, src_offset, src_stride, dst image, width, height), one work item per pixel.
framecl_dispatch copyToImage(const PlaneImage& image, uint32_t plane)
{
    framecl_dispatch dispatch{};
    dispatch.kernel = image.copy_kernel;
    dispatch.kernel_file = 0;
    dispatch.dims = 2;
    dispatch.global[0] = image.width;
    dispatch.global[1] = image.height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.arg_count = 4;
    dispatch.args[0] = {FRAMECL_ARG_INPUT_PLANE, plane, 0, 0, 0, 0};
    dispatch.args[1] = {FRAMECL_ARG_INPUT_IMAGE, plane, 0, 0, 0, 0};
    dispatch.args[2] = {FRAMECL_ARG_UINT, 0, image.width, 0, 0, 0};
    dispatch.args[3] = {FRAMECL_ARG_UINT, 0, image.height, 0, 0, 0};
    return dispatch;
}

} // namespace

// One session dispatch: which plugin's program holds its kernel, the dispatch, the
// intermediate each of its arguments binds (none: the frame's buffers, or no buffer),
// and whether it is the daemon's copy of an input plane into an image.
struct Session::StageDispatch {
    const Plugin* plugin;
    framecl_dispatch dispatch;
    std::array<std::optional<uint32_t>, FRAMECL_MAX_ARGS> intermediates{};
    bool input_copy = false;
    cl_program fused_program = nullptr; // a fused run's (pipeline/fusion.hpp), in place of the plugin's
};

Session::Session(const gpu::GpuContext& gpu, std::shared_ptr<const PipelineDefinition> pipeline, FrameShape input,
                 FrameShape output, const SessionOptions& options)
    : gpu_(&gpu), pipeline_(std::move(pipeline)), input_(input), output_(output),
      max_device_bytes_(options.max_device_bytes),
      // Guide §9.1: on-chip contents live only for one enqueue of one recording, so only
      // the qcom recording may use them.
      onchip_intermediates_(options.recording == gpu::RecordingMode::Qcom && options.onchip_intermediates &&
                            gpu.capabilities().onchip_global_memory_size > 0),
      recording_(options.recording), kernel_budget_ns_(options.kernel_budget_ns),
      stage_counters_(pipeline_->stages.size())
{
    for (const StageDefinition& stage : pipeline_->stages)
        stage_names_.push_back(stage.label);
}

Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::open(const gpu::GpuContext& gpu,
                                               std::shared_ptr<const PipelineDefinition> pipeline,
                                               const FrameShape& input, const SessionOptions& options)
{
    if (pipeline->stages.empty())
        return fail("a pipeline needs at least one stage");
    if (input.width == 0 || input.height == 0)
        return fail(fmt::format("frame size {}x{} is empty", input.width, input.height));
    auto stages = negotiateFormats(*pipeline, input, options.stage_choices, options.max_frame_pixels);
    if (!stages)
        return tl::unexpected(stages.error());
    std::vector<FusionNote> fusion = fuseStages(*pipeline, *stages);
    if (auto asked = askImageOutputs(*pipeline, *stages, options.max_frame_pixels); !asked)
        return tl::unexpected(asked.error());
    std::unique_ptr<Session> session(new Session(gpu, std::move(pipeline), input, stages->back().out, options));
    session->fusion_ = std::move(fusion);
    auto dispatches = session->planDispatches(*stages);
    if (!dispatches)
        return tl::unexpected(dispatches.error());
    session->planLiveRanges(*dispatches);
    if (auto assigned = session->assignLanes(options.priority_lane); !assigned)
        return tl::unexpected(assigned.error());
    auto state_layouts = session->sizeConstantsAndState(*stages);
    if (!state_layouts)
        return tl::unexpected(state_layouts.error());
    if (auto made = session->makeImages(); !made)
        return tl::unexpected(made.error());
    if (auto made = session->makeKernels(*stages, *dispatches, *state_layouts); !made)
        return tl::unexpected(made.error());
    session->keepParameters(std::move(*stages));
    // The kernel-time budget: seed each prediction (calibrated with every intermediate
    // in device memory), cut the dispatches for it, then place the intermediates for
    // the parts the recording will be cut into.
    auto calibrated = session->seedPredictions(options);
    if (!calibrated)
        return tl::unexpected(calibrated.error());
    if (isCancelled(options.cancelled))
        return fail(cancelled_text);
    session->planAllTiles();
    if (auto placed = session->placeForParts(*calibrated); !placed)
        return tl::unexpected(placed.error());
    if (auto recorded = session->recordAhead(options.cancelled, options.turns); !recorded)
        return fail(fmt::format("recording the pipeline ({}): {}", gpu::recordingModeName(session->recording_),
                                recorded.error().message));
    // The calibration and the recording's first run wrote the state: the first frame
    // starts from zeros.
    session->resetState();
    return session;
}

Result<std::vector<std::vector<Session::StageDispatch>>> Session::planDispatches(const std::vector<StagePlan>& stages)
{
    const auto addIntermediate = [&](const framecl_format& format, bool image, uint32_t plane) {
        Intermediate& added = intermediates_.emplace_back(Intermediate{format});
        added.bytes = framecl_packed_layout(format.fourcc, format.width, format.height, &added.layout);
        added.image = image;
        added.plane = plane;
        return uint32_t(intermediates_.size() - 1);
    };
    // Each stage's output that the next stage reads: not those within a fused run, which
    // never reach memory.
    std::vector<std::optional<uint32_t>> stage_output(stages.size());
    for (size_t k = 0; k + 1 < stages.size(); ++k)
        if (stages[k].run_last == k)
            stage_output[k] = addIntermediate(stages[k].out, stages[k].out_image, 0);
    std::vector<uint32_t> local_base; // index of stage k's first own intermediate
    for (const StagePlan& stage : stages) {
        local_base.push_back(uint32_t(intermediates_.size()));
        const framecl_plan& plan = stage.runs();
        const uint32_t images = boundIndices(plan, FRAMECL_ARG_INTERMEDIATE_IMAGE);
        for (uint32_t i = 0; i < plan.intermediate_count; ++i)
            addIntermediate(plan.intermediates[i].format, images >> i & 1u, 0);
    }

    // Each stage's dispatches: a copy of each input plane it reads as an image that no
    // stage wrote as one (the daemon's own kernel, timed with the stage), then its plan's.
    const Plugin* copy_plugin = pipeline_->registry->find("copy");
    std::vector<std::vector<StageDispatch>> dispatches(stages.size());
    for (size_t k = 0; k < stages.size(); ++k) {
        const framecl_plan& plan = stages[k].runs();
        // A fused run's dispatch writes the output of the run's last stage.
        const std::optional<uint32_t> output = stage_output[stages[k].run_last];
        std::map<uint32_t, uint32_t> copied_planes; // plane -> intermediate
        // The intermediate an argument of stage k binds; none for the frame's own input
        // and output, and for an argument that is not a buffer.
        const auto intermediateOf = [&](const framecl_arg& arg) -> std::optional<uint32_t> {
            switch (arg.kind) {
            case FRAMECL_ARG_INPUT_PLANE:
                return k == 0 ? std::nullopt : stage_output[k - 1];
            case FRAMECL_ARG_INPUT_IMAGE:
                if (const auto copied = copied_planes.find(arg.index); copied != copied_planes.end())
                    return copied->second;
                return stage_output[k - 1]; // written as an image by stage k - 1
            case FRAMECL_ARG_OUTPUT_PLANE:
            case FRAMECL_ARG_OUTPUT_IMAGE:
                return output;
            case FRAMECL_ARG_INTERMEDIATE:
            case FRAMECL_ARG_INTERMEDIATE_IMAGE:
                return local_base[k] + arg.index;
            default:
                return std::nullopt;
            }
        };
        const auto add = [&](const Plugin* plugin, const framecl_dispatch& dispatch, bool input_copy) {
            StageDispatch& added = dispatches[k].emplace_back(
                StageDispatch{plugin, dispatch, {}, input_copy, input_copy ? nullptr : stages[k].fused_program});
            for (uint32_t a = 0; a < dispatch.arg_count; ++a)
                added.intermediates[a] = intermediateOf(dispatch.args[a]);
        };
        const uint32_t reads = boundIndices(plan, FRAMECL_ARG_INPUT_IMAGE);
        for (uint32_t p = 0; p < 32; ++p) {
            if (!(reads >> p & 1u) || (p == 0 && k > 0 && stages[k - 1].out_image))
                continue;
            if (!copy_plugin)
                return fail(fmt::format("stage {} ({}): it reads its input as an image, and the built-in copy "
                                        "plugin that copies it into one is missing",
                                        k + 1, stage_names_[k]));
            copied_planes[p] = addIntermediate(stages[k].in, true, p);
            add(copy_plugin, copyToImage(*planeImage(stages[k].in, p), p), true);
        }
        for (uint32_t d = 0; d < plan.dispatch_count; ++d)
            add(pipeline_->stages[k].plugin, plan.dispatches[d], false);
    }
    return dispatches;
}

void Session::planLiveRanges(const std::vector<std::vector<StageDispatch>>& dispatches)
{
    std::vector<std::vector<uint32_t>> bound; // per session dispatch
    for (const auto& stage : dispatches)
        for (const StageDispatch& planned : stage) {
            std::vector<uint32_t>& intermediates = bound.emplace_back();
            for (uint32_t a = 0; a < planned.dispatch.arg_count; ++a)
                if (const auto i = planned.intermediates[a])
                    intermediates.push_back(*i);
        }
    const std::vector<memory::LiveRange> ranges = memory::liveRanges(bound, intermediates_.size());
    for (size_t i = 0; i < intermediates_.size(); ++i) {
        intermediates_[i].first = ranges[i].first;
        intermediates_[i].last = ranges[i].last;
    }
}

Result<void> Session::assignLanes(std::optional<uint32_t> priority_lane)
{
    if (priority_lane) {
        if (*priority_lane >= gpu_->lanes())
            return fail(fmt::format("priority lane {} of {}", *priority_lane, gpu_->lanes()));
        lanes_ = {*priority_lane};
        return {};
    }
    const uint32_t count = recording_ == gpu::RecordingMode::Off ? gpu_->defaultLanes() : 1;
    for (uint32_t lane = 0; lane < count; ++lane)
        lanes_.push_back(lane);
    return {};
}

Result<std::vector<framecl_frame_layout>> Session::sizeConstantsAndState(const std::vector<StagePlan>& stages)
{
    std::vector<framecl_frame_layout> state_layouts;
    for (const StagePlan& stage : stages) {
        const framecl_plan& plan = stage.runs();
        for (uint32_t c = 0; c < plan.constant_count; ++c)
            fixed_bytes_ += plan.constants[c].size;
        fixed_bytes_ += stage.param_block.size();
        for (uint32_t i = 0; i < plan.state_count; ++i) {
            const framecl_format& format = plan.states[i].format;
            fixed_bytes_ += framecl_packed_layout(format.fourcc, format.width, format.height,
                                                  &state_layouts.emplace_back());
        }
    }
    if (max_device_bytes_ > 0 && fixed_bytes_ > max_device_bytes_)
        return fail(fmt::format("its constants and state need {} bytes of device memory, over the {} allowed",
                                fixed_bytes_, max_device_bytes_));
    return state_layouts;
}

Result<void> Session::makeImages()
{
    uint64_t bytes = 0;
    for (const Intermediate& intermediate : intermediates_)
        if (intermediate.image) {
            const PlaneImage image = *planeImage(intermediate.format, intermediate.plane);
            bytes += uint64_t(image.width) * image.height * image.pixel_bytes;
        }
    if (bytes == 0)
        return {};
    if (!gpu_->capabilities().images)
        return fail("a variant reads or writes images, and the device has none (CL_DEVICE_IMAGE_SUPPORT)");
    if (max_device_bytes_ > 0 && fixed_bytes_ + bytes > max_device_bytes_)
        return fail(fmt::format("its images, constants and state need {} bytes of device memory, over the {} "
                                "allowed",
                                fixed_bytes_ + bytes, max_device_bytes_));
    for (uint32_t i = 0; i < intermediates_.size(); ++i) {
        const Intermediate& intermediate = intermediates_[i];
        if (!intermediate.image)
            continue;
        const PlaneImage image = *planeImage(intermediate.format, intermediate.plane);
        cl_int err = CL_SUCCESS;
        cl::Image2D made(gpu_->context(), CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
                         cl::ImageFormat(image.format.image_channel_order, image.format.image_channel_data_type),
                         image.width, image.height, 0, nullptr, &err);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateImage", err,
                                       fmt::format("an image of {}x{} for {} plane {}", image.width, image.height,
                                                   describe(intermediate.format), intermediate.plane)));
        images_.emplace(i, std::move(made));
    }
    image_bytes_ = bytes;
    return {};
}

Result<void> Session::makeKernels(const std::vector<StagePlan>& stages,
                                  const std::vector<std::vector<StageDispatch>>& dispatches,
                                  const std::vector<framecl_frame_layout>& state_layouts)
{
    // Every block first: a fused run's dispatch binds those of the stages after its own.
    std::vector<size_t> state_base, constant_base;
    for (size_t k = 0; k < stages.size(); ++k) {
        state_base.push_back(states_.size());
        constant_base.push_back(constants_.size());
        if (auto made = makeStates(k, stages[k].runs(), state_layouts); !made)
            return made;
        if (auto made = makeConstants(k, stages[k].runs()); !made)
            return made;
        if (auto made = makeParamBlock(k, stages[k].param_block); !made)
            return made;
        if (auto made = makeStatistics(k, stages[k].runs()); !made)
            return made;
    }
    for (size_t k = 0; k < stages.size(); ++k)
        for (const StageDispatch& planned : dispatches[k])
            if (auto added = addDispatch(k, planned, stages[k].choice, state_base[k], constant_base[k]); !added)
                return added;
    return {};
}

Result<void> Session::makeStates(size_t k, const framecl_plan& plan,
                                 const std::vector<framecl_frame_layout>& state_layouts)
{
    // State lives in device memory for the session's life (plugin.h, framecl_state).
    cl_int err = CL_SUCCESS;
    for (uint32_t i = 0; i < plan.state_count; ++i) {
        const framecl_frame_layout& layout = state_layouts[states_.size()];
        const uint64_t bytes = uint64_t(layout.planes[0].stride) * layout.height;
        states_.push_back(
            {cl::Buffer(gpu_->context(), CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, bytes, nullptr, &err), layout,
             bytes});
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateBuffer", err,
                                       fmt::format("stage {} ({}): state {}", k + 1, stage_names_[k], i)));
    }
    return {};
}

Result<void> Session::makeParamBlock(size_t k, const std::vector<uint8_t>& block)
{
    param_blocks_.emplace_back();
    if (block.empty())
        return {};
    // Read by the kernels only; written by the host when a frame's parameters change it
    // (writeParameters).
    cl_int err = CL_SUCCESS;
    param_blocks_.back() = cl::Buffer(gpu_->context(),
                                      CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY | CL_MEM_COPY_HOST_PTR, block.size(),
                                      const_cast<uint8_t*>(block.data()), &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err,
                                   fmt::format("stage {} ({}): its parameter block", k + 1, stage_names_[k])));
    return {};
}

Result<void> Session::makeStatistics(size_t k, const framecl_plan& plan)
{
    bool binds = false;
    for (uint32_t d = 0; d < plan.dispatch_count; ++d)
        for (uint32_t a = 0; a < plan.dispatches[d].arg_count; ++a)
            binds |= plan.dispatches[d].args[a].kind == FRAMECL_ARG_STATISTICS;
    if (!binds)
        return {};
    if (statistics_stage_)
        return fail(fmt::format("stages {} ({}) and {} ({}) both make statistics; a frame has one set",
                                *statistics_stage_ + 1, stage_names_[*statistics_stage_], k + 1, stage_names_[k]));
    statistics_stage_ = k;
    cl_int err = CL_SUCCESS;
    statistics_ = cl::Buffer(gpu_->context(), CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY, sizeof(framecl_statistics),
                             nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err,
                                   fmt::format("stage {} ({}): its statistics", k + 1, stage_names_[k])));
    fixed_bytes_ += sizeof(framecl_statistics);
    return {};
}

void Session::keepParameters(std::vector<StagePlan>&& stages)
{
    auto open = std::make_shared<ParameterSet>();
    for (size_t k = 0; k < stages.size(); ++k) {
        StagePlan& stage = stages[k];
        parameter_checks_.push_back({pipeline_->stages[k].plugin, stage_names_[k], stage.in, stage.out, stage.plan,
                                     stage.out_image ? 1u : 0u});
        open->params.push_back(std::move(stage.params));
        open->blocks.push_back(std::move(stage.param_block));
    }
    open_parameters_ = written_parameters_ = std::move(open);
}

Result<std::shared_ptr<const ParameterSet>> Session::changeParameters(const ParameterSet& now,
                                                                      std::span<const FrameParameter> changes) const
{
    return pipeline::changeParameters(parameter_checks_, now, changes);
}

Result<void> Session::writeParameters(const std::shared_ptr<const ParameterSet>& next, uint32_t lane)
{
    // A non-blocking write reads its bytes later: those of writes still running are kept.
    std::erase_if(parameter_writes_, [](const auto& write) {
        return write.first.template getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() <= CL_COMPLETE;
    });
    for (size_t k = 0; k < next->blocks.size(); ++k) {
        const std::vector<uint8_t>& block = next->blocks[k];
        if (block == written_parameters_->blocks[k])
            continue;
        cl_event written = nullptr;
        if (cl_int err = clEnqueueWriteBuffer(gpu_->lane(lane)(), param_blocks_[k](), CL_FALSE, 0, block.size(),
                                              block.data(), 0, nullptr, &written);
            err != CL_SUCCESS)
            return fail(gpu::clFailure("clEnqueueWriteBuffer", err,
                                       fmt::format("stage {} ({}): its parameter block", k + 1, stage_names_[k])));
        parameter_writes_.emplace_back(cl::Event(written), next);
    }
    written_parameters_ = next;
    return {};
}

Result<void> Session::makeConstants(size_t k, const framecl_plan& plan)
{
    cl_int err = CL_SUCCESS;
    for (uint32_t c = 0; c < plan.constant_count; ++c) {
        const framecl_constant& constant = plan.constants[c];
        // CL_MEM_COPY_HOST_PTR only reads the bytes, which cl::Buffer takes as void*.
        constants_.emplace_back(gpu_->context(), CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_COPY_HOST_PTR,
                                constant.size, const_cast<uint8_t*>(constant.bytes), &err);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateBuffer", err,
                                       fmt::format("stage {} ({}): constant {}", k + 1, stage_names_[k], c)));
    }
    return {};
}

Result<void> Session::addDispatch(size_t k, const StageDispatch& planned, const StageChoice& choice,
                                  size_t state_base, size_t constant_base)
{
    const framecl_dispatch& plan = planned.dispatch;
    const uint32_t index = uint32_t(dispatches_.size());
    const std::string name = fmt::format("stage {} ({}): {}", k + 1, stage_names_[k], plan.kernel);
    cl_program program =
        planned.fused_program ? planned.fused_program : pipeline_->programs->program(*planned.plugin, plan.kernel_file);
    if (!program)
        return fail(fmt::format("{}: the plugin's kernels did not build", name));
    cl_int err = CL_SUCCESS;
    cl::Kernel kernel(clCreateKernel(program, plan.kernel, &err));
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateKernel", err, name));
    auto local_args = bindArguments(kernel, name, index, planned, state_base, constant_base, k);
    if (!local_args)
        return tl::unexpected(local_args.error());
    // plugin.h: the global size is rounded up to the local size the plugin asks
    // for; kernels check their bounds.
    std::array<size_t, 2> local{plan.local_hint[0], plan.dims > 1 ? plan.local_hint[1] : 0};
    if (local[0] == 0)
        local = {choice.local[0], plan.dims > 1 ? choice.local[1] : 0};
    std::array<size_t, 2> global{plan.global[0], plan.dims > 1 ? plan.global[1] : 1};
    for (size_t axis = 0; axis < 2; ++axis)
        if (local[axis] > 0)
            global[axis] = (global[axis] + local[axis] - 1) / local[axis] * local[axis];
    gpu::ReplayDispatch whole{name, std::move(kernel), plan.dims, global, local, {}, false, std::move(*local_args)};
    const DispatchShape shape{plan.dims, global, local, plan.tileable_axes};
    dispatches_.push_back({std::move(whole), shape, uint32_t(k), plan.kernel, {}, {}, planned.input_copy});
    return {};
}

Result<std::vector<std::pair<cl_uint, size_t>>> Session::bindArguments(const cl::Kernel& kernel,
                                                                       const std::string& name, uint32_t index,
                                                                       const StageDispatch& planned,
                                                                       size_t state_base, size_t constant_base,
                                                                       size_t k)
{
    cl_uint arg_index = 0;
    std::vector<std::pair<cl_uint, size_t>> local_args;
    for (uint32_t a = 0; a < planned.dispatch.arg_count; ++a) {
        const framecl_arg& arg = planned.dispatch.args[a];
        const std::optional<uint32_t> intermediate = planned.intermediates[a];
        Result<void> bound;
        switch (arg.kind) {
        case FRAMECL_ARG_INPUT_PLANE:
        case FRAMECL_ARG_OUTPUT_PLANE:
        case FRAMECL_ARG_INTERMEDIATE:
            if (intermediate) {
                const uint32_t plane = arg.kind == FRAMECL_ARG_INTERMEDIATE ? 0 : arg.index;
                intermediate_args_.push_back({index, arg_index, *intermediate, plane});
            } else {
                frame_args_.push_back({index, arg_index, arg.kind == FRAMECL_ARG_OUTPUT_PLANE, arg.index});
            }
            arg_index += 3;
            break;
        case FRAMECL_ARG_INPUT_IMAGE:
        case FRAMECL_ARG_OUTPUT_IMAGE:
        case FRAMECL_ARG_INTERMEDIATE_IMAGE: {
            const cl_mem image = images_.at(*intermediate)();
            bound = setArg(kernel, name, arg_index++, sizeof image, &image);
            break;
        }
        case FRAMECL_ARG_UINT:
            bound = setArg(kernel, name, arg_index++, sizeof arg.uint_value, &arg.uint_value);
            break;
        case FRAMECL_ARG_INT:
            bound = setArg(kernel, name, arg_index++, sizeof arg.int_value, &arg.int_value);
            break;
        case FRAMECL_ARG_FLOAT:
            bound = setArg(kernel, name, arg_index++, sizeof arg.float_value, &arg.float_value);
            break;
        case FRAMECL_ARG_LOCAL:
            local_args.emplace_back(arg_index, arg.local_bytes);
            bound = setArg(kernel, name, arg_index++, arg.local_bytes, nullptr);
            break;
        case FRAMECL_ARG_CONSTANT: {
            const cl_mem constant = constants_[constant_base + arg.index]();
            bound = setArg(kernel, name, arg_index++, sizeof constant, &constant);
            break;
        }
        case FRAMECL_ARG_PARAMS: {
            const cl_mem block = param_blocks_.at(k + arg.index)();
            bound = setArg(kernel, name, arg_index++, sizeof block, &block);
            break;
        }
        case FRAMECL_ARG_STATISTICS: {
            const cl_mem statistics = statistics_();
            bound = setArg(kernel, name, arg_index++, sizeof statistics, &statistics);
            break;
        }
        case FRAMECL_ARG_STATE: {
            const State& state = states_[state_base + arg.index];
            bound = setPlaneArgs(kernel, name, arg_index, state.buffer(), state.layout.planes[0]);
            arg_index += 3;
            break;
        }
        }
        if (!bound)
            return tl::unexpected(bound.error());
    }
    return local_args;
}

Result<bool> Session::seedPredictions(const SessionOptions& options)
{
    if (options.assumed_ns_per_item) {
        for (PlannedDispatch& planned : dispatches_)
            planned.cost.ns_per_item = *options.assumed_ns_per_item;
        return false;
    }
    if (kernel_budget_ns_ == 0)
        return false;
    if (auto done = placeIntermediates(std::vector<bool>(intermediates_.size(), false)); !done)
        return tl::unexpected(done.error());
    if (auto calibrated = calibrate(options.cancelled, options.turns); !calibrated)
        return fail(fmt::format("calibrating for gpu.kernel_budget_ms: {}", calibrated.error().message));
    return true;
}

Result<void> Session::placeForParts(bool calibrated)
{
    const std::vector<bool> wanted = planOnchipRuns();
    if (calibrated && std::find(wanted.begin(), wanted.end(), true) == wanted.end())
        return {};
    return placeIntermediates(wanted);
}

Result<void> Session::placeIntermediates(const std::vector<bool>& onchip_allowed)
{
    // Images are made once (makeImages); the buffers are placed here.
    std::vector<memory::IntermediateUse> uses;
    std::vector<size_t> buffers; // the intermediate of each use
    for (size_t i = 0; i < intermediates_.size(); ++i)
        if (!intermediates_[i].image) {
            uses.push_back({intermediates_[i].bytes, intermediates_[i].first, intermediates_[i].last,
                            onchip_allowed[i]});
            buffers.push_back(i);
        }
    const uint64_t onchip_capacity = onchip_intermediates_ ? gpu_->capabilities().onchip_global_memory_size : 0;
    const memory::IntermediatePlan placement = memory::planIntermediates(uses, onchip_capacity, onchip_alignment);
    uint64_t device_bytes = fixed_bytes_ + image_bytes_;
    for (uint64_t size : placement.buffer_sizes)
        device_bytes += std::max<uint64_t>(size, 1);
    if (max_device_bytes_ > 0 && device_bytes > max_device_bytes_)
        return fail(fmt::format("its intermediates, images, constants and state need {} bytes of device memory, "
                                "over the {} allowed",
                                device_bytes, max_device_bytes_));
    intermediate_buffers_.clear(); // the previous placement's: the calibration's
    cl_int err = CL_SUCCESS;
    std::vector<cl_mem> device_buffers;
    for (uint64_t size : placement.buffer_sizes) {
        intermediate_buffers_.emplace_back(gpu_->context(), CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS,
                                           std::max<uint64_t>(size, 1), nullptr, &err);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateBuffer", err, "intermediate buffer"));
        device_buffers.push_back(intermediate_buffers_.back()());
    }
    std::vector<cl_mem> mems(intermediates_.size(), nullptr);
    onchip_count_ = 0;
    for (size_t use = 0; use < buffers.size(); ++use) {
        const size_t i = buffers[use];
        const memory::Placement& where = placement.placements[use];
        intermediates_[i].onchip = where.onchip;
        if (!where.onchip) {
            mems[i] = device_buffers[where.buffer];
            continue;
        }
        const cl_mem_properties properties[] = {CL_MEM_ONCHIP_GLOBAL_QCOM, 1, CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM,
                                                where.offset, 0};
        cl_mem onchip = gpu_->vendor().clCreateBufferWithProperties(gpu_->context()(), properties, CL_MEM_READ_WRITE,
                                                                    intermediates_[i].bytes, nullptr, &err);
        if (err != CL_SUCCESS)
            return fail(gpu::clFailure("clCreateBufferWithProperties", err,
                                       fmt::format("on-chip intermediate at offset {}", where.offset)));
        intermediate_buffers_.emplace_back(onchip); // owns it
        mems[i] = onchip;
        ++onchip_count_;
    }
    onchip_bytes_ = placement.onchip_bytes;
    device_bytes_ = device_bytes;
    for (const IntermediateArg& arg : intermediate_args_) {
        const gpu::ReplayDispatch& whole = dispatches_[arg.dispatch].whole;
        const Intermediate& buffer = intermediates_[arg.intermediate];
        if (auto bound = setPlaneArgs(whole.kernel, whole.name, arg.index, mems[arg.intermediate],
                                      buffer.layout.planes[arg.plane]);
            !bound)
            return bound;
    }
    return {};
}

std::vector<bool> Session::planOnchipRuns()
{
    std::vector<bool> allowed(intermediates_.size(), onchip_intermediates_);
    if (!onchip_intermediates_)
        return allowed;
    // Runs of consecutive stages whose predicted time together stays within a tile's
    // target each run as one part; a stage over it alone (or with more dispatches than
    // a recording holds) is cut at its tiles, so nothing of it stays on-chip.
    std::vector<double> stage_ns(stage_names_.size(), 0);
    for (const PlannedDispatch& planned : dispatches_)
        stage_ns[planned.stage] += planned.cost.tileNs(workItems(planned.shape.global));
    const double target = kernel_budget_ns_ > 0 ? tileTarget(kernel_budget_ns_) : INFINITY;
    // A qcom recording's capacity bounds a run's dispatches as well.
    std::vector<uint32_t> stage_dispatches(stage_names_.size(), 0);
    for (const PlannedDispatch& planned : dispatches_)
        ++stage_dispatches[planned.stage];
    const uint32_t capacity = recordingCapacity();
    std::vector<uint32_t> group(stage_ns.size(), 0);
    std::vector<double> group_ns{0};
    std::vector<uint32_t> group_dispatches{0};
    for (size_t k = 0; k < stage_ns.size(); ++k) {
        if (k > 0 && (group_ns.back() + stage_ns[k] > target ||
                      (capacity > 0 && group_dispatches.back() + stage_dispatches[k] > capacity))) {
            group_ns.push_back(0);
            group_dispatches.push_back(0);
        }
        group[k] = uint32_t(group_ns.size() - 1);
        group_ns.back() += stage_ns[k];
        group_dispatches.back() += stage_dispatches[k];
    }
    for (size_t i = 0; i < intermediates_.size(); ++i) {
        const uint32_t first = group[dispatches_[intermediates_[i].first].stage];
        const uint32_t last = group[dispatches_[intermediates_[i].last].stage];
        allowed[i] = first == last && group_ns[first] <= target &&
                     (capacity == 0 || group_dispatches[first] <= capacity);
    }
    run_of_stage_ = std::move(group);
    return allowed;
}

Cut Session::cutBetween(const RecordedTile& before, const RecordedTile& after) const
{
    // Alive across a cut between tiles of one dispatch: anything that dispatch binds.
    for (const Intermediate& buffer : intermediates_)
        if (buffer.onchip && buffer.first <= before.dispatch && buffer.last >= after.dispatch)
            return Cut::No;
    if (!run_of_stage_.empty() &&
        run_of_stage_[dispatches_[before.dispatch].stage] != run_of_stage_[dispatches_[after.dispatch].stage])
        return Cut::Must;
    return Cut::May;
}

Result<void> Session::recordAhead(const std::atomic<bool>* cancelled, GpuTurns* turns)
{
    // Stand-ins shaped as the client's buffers will be, packed. A shape without a packed
    // layout (odd NV12) records at its first frame instead.
    framecl_frame_layout in_layout{}, out_layout{};
    const uint64_t in_bytes = framecl_packed_layout(input_.fourcc, input_.width, input_.height, &in_layout);
    const uint64_t out_bytes = framecl_packed_layout(output_.fourcc, output_.width, output_.height, &out_layout);
    if (in_bytes == 0 || out_bytes == 0)
        return {};
    cl_int err = CL_SUCCESS;
    cl::Buffer in(gpu_->context(), CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, in_bytes, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "stand-in input"));
    cl::Buffer out(gpu_->context(), CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, out_bytes, nullptr, &err);
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clCreateBuffer", err, "stand-in output"));
    const FrameBuffer in_frame{in(), &in_layout}, out_frame{out(), &out_layout};

    auto recorded = record(in_frame, out_frame);
    if (!recorded)
        return tl::unexpected(recorded.error());
    // One run: a driver finishes a recording at its first enqueue, and PoCL compiles
    // each kernel for its work-group size at its first run. A part at a time, each in
    // its turn and waited for, as the frames' parts go: the lane is shared with the
    // clients' frames, which would otherwise wait for the whole of a large frame.
    for (size_t p = 0; p < (*recorded)->parts.size(); ++p) {
        if (isCancelled(cancelled))
            return fail(cancelled_text);
        const RecordedPart& part = (*recorded)->parts[p];
        auto enqueued = enqueueInTurn(turns, *gpu_, predictedNs(**recorded, p), lanes_.front(), [&]() -> Result<cl::Event> {
            auto events = part.replay->enqueue(
                frameUpdates(in_frame, out_frame, (*recorded)->first_tile, part.first, part.end), lanes_.front());
            if (!events)
                return tl::unexpected(events.error());
            return events->back(); // the lane is in order: the last ends the part
        });
        if (!enqueued)
            return tl::unexpected(enqueued.error());
        if (err = enqueued->wait(); err != CL_SUCCESS)
            return fail(gpu::clFailure("clWaitForEvents", err, "the recording's first run"));
    }
    // Every frame replaces the stand-ins through its updates; what was recorded for them
    // alone goes with them.
    // The first client frame still teaches the predictions nothing (EnqueuedFrame): under
    // khr without mutable dispatch its buffers get a command buffer of their own.
    for (const RecordedPart& part : (*recorded)->parts)
        part.replay->forget(frameUpdates(in_frame, out_frame, (*recorded)->first_tile, part.first, part.end));
    sequence_ = std::move(*recorded);
    return {};
}

std::vector<gpu::ArgUpdate> Session::frameUpdates(const FrameBuffer& in, const FrameBuffer& out,
                                                  const std::vector<uint32_t>& first_tile, uint32_t first,
                                                  uint32_t end) const
{
    std::vector<gpu::ArgUpdate> updates;
    updates.reserve(frame_args_.size() * 3);
    for (const FrameArg& arg : frame_args_) {
        const FrameBuffer& buffer = arg.output ? out : in;
        const cl_uint offset = buffer.layout->planes[arg.plane].offset;
        const cl_uint stride = buffer.layout->planes[arg.plane].stride;
        const uint32_t from = std::max(first_tile[arg.dispatch], first);
        const uint32_t to = std::min(first_tile[arg.dispatch + 1], end);
        for (uint32_t tile = from; tile < to; ++tile) {
            updates.push_back(update(tile - first, arg.index, &buffer.mem, sizeof buffer.mem, true));
            updates.push_back(update(tile - first, arg.index + 1, &offset, sizeof offset));
            updates.push_back(update(tile - first, arg.index + 2, &stride, sizeof stride));
        }
    }
    return updates;
}

Result<void> Session::checkInput(const framecl_frame_layout& layout) const
{
    return checkShape(layout, input_, "input");
}

Result<void> Session::checkOutput(const framecl_frame_layout& layout) const
{
    return checkShape(layout, output_, "output");
}

size_t EnqueuedFrame::parts() const
{
    return sequence ? sequence->parts.size() : 0;
}

Result<EnqueuedFrame> Session::begin(const FrameBuffer& in, const FrameBuffer& out,
                                     std::shared_ptr<const ParameterSet> parameters)
{
    if (!sequence_) {
        // Recorded at the first frame, and again after a re-plan: a recording captures
        // every argument, and only now are there buffers to name.
        auto recorded = record(in, out);
        if (!recorded)
            return fail(fmt::format("recording the pipeline ({}): {}", gpu::recordingModeName(recording_),
                                    recorded.error().message));
        sequence_ = std::move(*recorded);
    }
    const bool first = sequence_->frames_enqueued++ == 0;
    EnqueuedFrame frame;
    frame.sequence = sequence_;
    frame.in = in;
    frame.out = out;
    frame.first_of_sequence = first;
    frame.parameters = std::move(parameters);
    return frame;
}

void EnqueuedFrame::noteLaneWork(uint32_t lane, cl::Event end, int32_t first_dispatch)
{
    if (lane_work.size() <= lane)
        lane_work.resize(lane + 1);
    lane_work[lane].push_back({std::move(end), first_dispatch});
    last_lane = lane;
}

std::vector<cl::Event> EnqueuedFrame::dependencies(uint32_t lane, int32_t last_dispatch) const
{
    std::vector<cl::Event> waits;
    for (uint32_t other = 0; other < lane_work.size(); ++other) {
        if (other == lane)
            continue;
        const auto& runs = lane_work[other];
        const auto earlier = std::find_if(runs.rbegin(), runs.rend(),
                                          [&](const LaneWork& run) { return run.first_dispatch < last_dispatch; });
        if (earlier != runs.rend())
            waits.push_back(earlier->end);
    }
    return waits;
}

std::vector<cl::Event> EnqueuedFrame::otherLanes(uint32_t lane) const
{
    std::vector<cl::Event> waits;
    for (uint32_t other = 0; other < lane_work.size(); ++other)
        if (other != lane && !lane_work[other].empty())
            waits.push_back(lane_work[other].back().end);
    return waits;
}

namespace {

// Makes what `queue` runs after this wait for `events` (none: nothing enqueued).
Result<void> enqueueBarrier(const cl::CommandQueue& queue, const std::vector<cl::Event>& events, const char* what)
{
    if (events.empty())
        return {};
    std::vector<cl_event> raw;
    for (const cl::Event& event : events)
        raw.push_back(event());
    if (cl_int err = clEnqueueBarrierWithWaitList(queue(), cl_uint(raw.size()), raw.data(), nullptr);
        err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueBarrierWithWaitList", err, what));
    return {};
}

} // namespace

bool Session::hasLane(uint32_t lane) const
{
    return std::find(lanes_.begin(), lanes_.end(), lane) != lanes_.end();
}

Result<void> Session::joinLanes(const EnqueuedFrame& frame, uint32_t lane) const
{
    return enqueueBarrier(gpu_->lane(lane), frame.otherLanes(lane), "the end of a frame, after its other lanes");
}

Result<cl::Event> Session::readStatistics(EnqueuedFrame& frame, uint32_t lane)
{
    if (auto waited = enqueueBarrier(gpu_->lane(lane), frame.otherLanes(lane), "the frame's statistics"); !waited)
        return tl::unexpected(waited.error());
    frame.statistics = std::make_shared<framecl_statistics>();
    cl_event read = nullptr;
    if (cl_int err = clEnqueueReadBuffer(gpu_->lane(lane)(), statistics_(), CL_FALSE, 0, sizeof(framecl_statistics),
                                         frame.statistics.get(), 0, nullptr, &read);
        err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueReadBuffer", err, "the frame's statistics"));
    return cl::Event(read);
}

Result<cl::Event> Session::enqueuePart(EnqueuedFrame& frame, uint32_t lane)
{
    if (!hasLane(lane))
        return fail(fmt::format("a part on lane {}, which is not the session's", lane));
    const RecordedSequence& sequence = *frame.sequence;
    const RecordedPart& part = sequence.parts.at(frame.parts_enqueued);
    const auto first_dispatch = int32_t(sequence.tiles[part.first].dispatch);
    const auto last_dispatch = int32_t(sequence.tiles[part.end - 1].dispatch);
    std::vector<cl::Event> waits = frame.dependencies(lane, last_dispatch);
    const bool new_parameters =
        frame.parts_enqueued == 0 && frame.parameters && frame.parameters != written_parameters_;
    if (frame.parts_enqueued == 0 &&
        (dispatches_.size() > 1 || !states_.empty() || new_parameters || statistics_stage_))
        for (uint32_t other = 0; other < last_frame_work_.size(); ++other)
            if (other != lane && last_frame_work_[other])
                waits.push_back(*last_frame_work_[other]);
    if (auto waited = enqueueBarrier(gpu_->lane(lane), waits, "a part, after the work it reads on other lanes");
        !waited)
        return tl::unexpected(waited.error());
    if (frame.parts_enqueued == 0 && state_reset_pending_) {
        for (const State& state : states_) {
            const cl_uchar zero = 0;
            if (cl_int err = clEnqueueFillBuffer(gpu_->lane(lane)(), state.buffer(), &zero, sizeof zero, 0,
                                                 state.bytes, 0, nullptr, nullptr);
                err != CL_SUCCESS)
                return fail(gpu::clFailure("clEnqueueFillBuffer", err, "resetting the session's state"));
        }
        state_reset_pending_ = false;
    }
    if (new_parameters)
        if (auto written = writeParameters(frame.parameters, lane); !written)
            return tl::unexpected(written.error());
    if (frame.parts_enqueued == 0 && statistics_stage_) {
        const cl_uint zero = 0;
        if (cl_int err = clEnqueueFillBuffer(gpu_->lane(lane)(), statistics_(), &zero, sizeof zero, 0,
                                             sizeof(framecl_statistics), 0, nullptr, nullptr);
            err != CL_SUCCESS)
            return fail(gpu::clFailure("clEnqueueFillBuffer", err, "zeroing the frame's statistics"));
    }
    if (kernel_budget_ns_ > 0 && !sequence.events_per_tile) {
        cl_event marker = nullptr;
        if (cl_int err = clEnqueueMarkerWithWaitList(gpu_->lane(lane)(), 0, nullptr, &marker); err != CL_SUCCESS)
            return fail(gpu::clFailure("clEnqueueMarkerWithWaitList", err, "the start of a recording"));
        frame.part_starts.emplace_back(marker); // takes the reference the enqueue returned
    }
    auto events = part.replay->enqueue(frameUpdates(frame.in, frame.out, sequence.first_tile, part.first, part.end),
                                       lane);
    if (!events)
        return tl::unexpected(events.error());
    frame.events.insert(frame.events.end(), events->begin(), events->end());
    ++frame.parts_enqueued;
    cl::Event end = frame.events.back();
    if (frame.allEnqueued() && statistics_stage_) {
        auto read = readStatistics(frame, lane);
        if (!read)
            return tl::unexpected(read.error());
        end = std::move(*read);
    }
    frame.noteLaneWork(lane, end, first_dispatch);
    if (lanes_.size() > 1) {
        last_frame_work_.resize(gpu_->lanes());
        last_frame_work_[lane] = end;
    }
    return end;
}

void Session::resetState()
{
    state_reset_pending_ = !states_.empty();
}

Result<EnqueuedFrame> Session::enqueue(const FrameBuffer& in, const FrameBuffer& out)
{
    auto frame = begin(in, out);
    if (!frame)
        return frame;
    while (!frame->allEnqueued())
        if (auto part = enqueuePart(*frame, lanes_.front()); !part)
            return tl::unexpected(part.error());
    return frame;
}

Result<std::shared_ptr<RecordedSequence>> Session::record(const FrameBuffer& in, const FrameBuffer& out) const
{
    auto sequence = std::make_shared<RecordedSequence>();
    sequence->events_per_tile = recording_ == gpu::RecordingMode::Off;
    std::vector<gpu::ReplayDispatch> recorded;
    for (uint32_t d = 0; d < dispatches_.size(); ++d) {
        const PlannedDispatch& planned = dispatches_[d];
        const uint32_t count = uint32_t(planned.tiles.size());
        sequence->first_tile.push_back(uint32_t(recorded.size()));
        for (uint32_t t = 0; t < count; ++t) {
            // Shares the session's kernel with the tiles of every sequence recorded. An
            // older sequence still finishing frames is not enqueued again, and each mode
            // has already taken what it replays of the arguments (a list at its
            // enqueues, a recording or command buffer when recorded), so binding this
            // one's initial arguments leaves those frames alone.
            gpu::ReplayDispatch tile = planned.whole;
            tile.offset = planned.tiles[t].offset;
            tile.global = planned.tiles[t].global;
            if (count > 1)
                tile.name += fmt::format(" tile {}/{}", t + 1, count);
            tile.flush_after = t + 1 < count;
            recorded.push_back(std::move(tile));
            sequence->tiles.push_back({d, t, count, workItems(planned.tiles[t].global)});
        }
    }
    sequence->first_tile.push_back(uint32_t(recorded.size()));

    // The parts: runs of tiles within the budget's target, cut where no on-chip
    // intermediate is alive, and always between the runs of stages planned apart
    // (docs/architecture.md, "Scheduling").
    std::vector<double> tile_ns;
    std::vector<Cut> cuts;
    for (size_t t = 0; t < sequence->tiles.size(); ++t) {
        const RecordedTile& tile = sequence->tiles[t];
        tile_ns.push_back(dispatches_[tile.dispatch].cost.tileNs(tile.items));
        cuts.push_back(t > 0 ? cutBetween(sequence->tiles[t - 1], tile) : Cut::No);
    }
    const double target = kernel_budget_ns_ > 0 ? tileTarget(kernel_budget_ns_) : 0;
    for (const PartRange& range : planParts(tile_ns, cuts, target, recordingCapacity())) {
        std::vector<gpu::ReplayDispatch> dispatches(recorded.begin() + range.first, recorded.begin() + range.end);
        auto replay = gpu::makeReplay(recording_, *gpu_, lanes_.front(), std::move(dispatches),
                                      frameUpdates(in, out, sequence->first_tile, range.first, range.end));
        if (!replay)
            return tl::unexpected(replay.error());
        sequence->parts.push_back({std::move(*replay), range.first, range.end});
    }
    return sequence;
}

} // namespace framecl::pipeline
