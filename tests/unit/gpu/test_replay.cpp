#include <doctest/doctest.h>

#include <cstring>
#include <iterator>
#include <utility>

#include "gpu/replay.hpp"
#include "gpu_test_support.hpp"
#include "qcom_emulation.hpp"

using namespace framecl;
using namespace framecl::gpu;

namespace {

// One stage of a three-stage pipeline: dst = src * mul + add per element. The bounds
// check lets a dispatch round its global size up to a work-group multiple.
constexpr const char* kStageSource = R"(
kernel void stage(global const uint* src, global uint* dst, uint mul, uint add, uint n)
{
    const size_t i = get_global_id(0);
    if (i < n)
        dst[i] = src[i] * mul + add;
}
)";

constexpr cl_uint kElements = 997; // a multiple of no work-group size

struct StageConstants {
    cl_uint mul;
    cl_uint add;
};
constexpr StageConstants kStages[] = {{3, 1}, {5, 7}, {2, 11}};

// The three stages in plain C++, from the kernel's definition.
std::vector<cl_uint> cpuReference(std::vector<cl_uint> values)
{
    for (const StageConstants& stage : kStages)
        for (cl_uint& value : values)
            value = value * stage.mul + stage.add;
    return values;
}

ArgUpdate bufferArgument(uint32_t dispatch, cl_uint arg_index, const cl::Buffer& buffer)
{
    ArgUpdate update{dispatch, arg_index, sizeof(cl_mem), {}, true};
    const cl_mem handle = buffer();
    std::memcpy(update.value.data(), &handle, sizeof(handle));
    return update;
}

// A session as Session would build it: input -> t1 -> t2 -> output, through two
// intermediates, with pools of input and output buffers that frames rotate through.
// Dispatch 0 reads the frame's input (argument 0), dispatch 2 writes its output
// (argument 1).
class ThreeStages {
public:
    ThreeStages(const GpuContext& gpu, size_t inputs, size_t outputs) : gpu_(gpu)
    {
        program_ = cl::Program(gpu.context(), kStageSource);
        REQUIRE(program_.build() == CL_SUCCESS);
        const size_t bytes = kElements * sizeof(cl_uint);
        for (cl::Buffer* intermediate : {&t1_, &t2_})
            *intermediate = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, bytes);
        for (size_t i = 0; i < inputs; ++i) {
            std::vector<cl_uint> values(kElements);
            for (cl_uint j = 0; j < kElements; ++j)
                values[j] = j * 7 + static_cast<cl_uint>(i) * 1000 + 13;
            inputs_.emplace_back(gpu.context(), CL_MEM_READ_ONLY, bytes);
            REQUIRE(gpu.queue().enqueueWriteBuffer(inputs_.back(), CL_TRUE, 0, bytes, values.data()) == CL_SUCCESS);
            input_values_.push_back(std::move(values));
        }
        for (size_t i = 0; i < outputs; ++i)
            outputs_.emplace_back(gpu.context(), CL_MEM_WRITE_ONLY, bytes);
    }

    // Each dispatch with its own kernel, every argument set but the frame's. The
    // first two let the runtime choose the work-group; the last rounds up to 8s.
    std::vector<ReplayDispatch> dispatches() const
    {
        const cl::Buffer* sources[] = {nullptr, &t1_, &t2_};
        const cl::Buffer* destinations[] = {&t1_, &t2_, nullptr};
        std::vector<ReplayDispatch> dispatches;
        for (size_t i = 0; i < 3; ++i) {
            ReplayDispatch dispatch;
            dispatch.name = "stage " + std::to_string(i) + ": stage";
            cl_int err = CL_SUCCESS;
            dispatch.kernel = cl::Kernel(program_, "stage", &err);
            REQUIRE(err == CL_SUCCESS);
            const cl_kernel kernel = dispatch.kernel();
            if (sources[i]) {
                const cl_mem source = (*sources[i])();
                REQUIRE(clSetKernelArg(kernel, 0, sizeof(source), &source) == CL_SUCCESS);
            }
            if (destinations[i]) {
                const cl_mem destination = (*destinations[i])();
                REQUIRE(clSetKernelArg(kernel, 1, sizeof(destination), &destination) == CL_SUCCESS);
            }
            REQUIRE(clSetKernelArg(kernel, 2, sizeof(cl_uint), &kStages[i].mul) == CL_SUCCESS);
            REQUIRE(clSetKernelArg(kernel, 3, sizeof(cl_uint), &kStages[i].add) == CL_SUCCESS);
            REQUIRE(clSetKernelArg(kernel, 4, sizeof(cl_uint), &kElements) == CL_SUCCESS);
            dispatch.dims = 1;
            dispatch.global = {i == 2 ? size_t{1000} : size_t{kElements}, 1};
            dispatch.local = {i == 2 ? size_t{8} : size_t{0}, 0};
            dispatches.push_back(std::move(dispatch));
        }
        return dispatches;
    }

    std::vector<ArgUpdate> frame(size_t input, size_t output) const
    {
        return {bufferArgument(0, 0, inputs_[input]), bufferArgument(2, 1, outputs_[output])};
    }

    // Runs one frame of `replay` into a zeroed output and reads the output back.
    std::vector<cl_uint> run(Replay& replay, size_t input, size_t output) const
    {
        return run(replay, frame(input, output), output);
    }

    // The same with the frame's `updates` as given (they must name output `output`).
    std::vector<cl_uint> run(Replay& replay, const std::vector<ArgUpdate>& updates, size_t output) const
    {
        return run(replay, updates, outputs_[output]);
    }

    // The same into a buffer of the caller's, which `updates` must name as the output.
    std::vector<cl_uint> run(Replay& replay, const std::vector<ArgUpdate>& updates, const cl::Buffer& output) const
    {
        const size_t bytes = kElements * sizeof(cl_uint);
        REQUIRE(gpu_.queue().enqueueFillBuffer(output, cl_uint{0}, 0, bytes) == CL_SUCCESS);
        auto events = replay.enqueue(updates, 0);
        REQUIRE_MESSAGE(events.has_value(), (events ? "" : events.error().message));
        REQUIRE_FALSE(events->empty());
        REQUIRE(cl::WaitForEvents(*events) == CL_SUCCESS);
        std::vector<cl_uint> values(kElements);
        REQUIRE(gpu_.queue().enqueueReadBuffer(output, CL_TRUE, 0, bytes, values.data()) == CL_SUCCESS);
        return values;
    }

    const std::vector<cl_uint>& inputValues(size_t input) const { return input_values_[input]; }
    const cl::Buffer& inputBuffer(size_t input) const { return inputs_[input]; }

private:
    const GpuContext& gpu_;
    cl::Program program_;
    cl::Buffer t1_;
    cl::Buffer t2_;
    std::vector<cl::Buffer> inputs_;
    std::vector<std::vector<cl_uint>> input_values_;
    std::vector<cl::Buffer> outputs_;
};

// (input, output) per frame: every pair differs from the one before it, and the last
// comes back after others (a command buffer reused after the arguments changed).
const std::vector<std::pair<size_t, size_t>> kFrames = {{0, 0}, {1, 1}, {2, 0}, {0, 1}, {1, 0}, {1, 1}};

// Each of `whole` cut into `count` tiles along X, each with its global offset, as a
// session's tile plan does: extents a multiple of the local size (where one is set), the
// last tile taking the rest, a flush asked for between tiles.
std::vector<ReplayDispatch> tiled(const std::vector<ReplayDispatch>& whole, size_t count)
{
    std::vector<ReplayDispatch> tiles;
    for (const ReplayDispatch& dispatch : whole) {
        const size_t granule = dispatch.local[0] ? dispatch.local[0] : 1;
        const size_t granules = (dispatch.global[0] + granule - 1) / granule;
        const size_t extent = (granules + count - 1) / count * granule;
        for (size_t t = 0; t < count; ++t) {
            ReplayDispatch tile = dispatch;
            tile.offset = {t * extent, 0};
            tile.global = {t + 1 < count ? extent : dispatch.global[0] - t * extent, 1};
            tile.flush_after = t + 1 < count;
            tiles.push_back(tile);
        }
    }
    return tiles;
}

// `updates` of whole dispatches, repeated for each of their `count` tiles.
std::vector<ArgUpdate> tiledUpdates(const std::vector<ArgUpdate>& updates, size_t count)
{
    std::vector<ArgUpdate> each;
    for (const ArgUpdate& update : updates)
        for (size_t t = 0; t < count; ++t) {
            each.push_back(update);
            each.back().dispatch = uint32_t(update.dispatch * count + t);
        }
    return each;
}

std::unique_ptr<Replay> replayFor(RecordingMode mode, const GpuContext& gpu, const ThreeStages& stages)
{
    auto replay = makeReplay(mode, gpu, 0, stages.dispatches(), stages.frame(0, 0));
    REQUIRE_MESSAGE(replay.has_value(), (replay ? "" : replay.error().message));
    REQUIRE((*replay)->mode() == mode);
    return std::move(*replay);
}

// Every frame of kFrames equals the CPU reference; returns the outputs, in order.
std::vector<std::vector<cl_uint>> checkFramesAgainstCpu(Replay& replay, const ThreeStages& stages)
{
    std::vector<std::vector<cl_uint>> outputs;
    for (const auto& [input, output] : kFrames) {
        outputs.push_back(stages.run(replay, input, output));
        CHECK(outputs.back() == cpuReference(stages.inputValues(input)));
    }
    return outputs;
}

// Counts command buffers created and released through the vendor table.
struct CommandBufferCount {
    static inline clCreateCommandBufferKHR_fn create = nullptr;
    static inline clReleaseCommandBufferKHR_fn release = nullptr;
    static inline int created = 0;
    static inline int released = 0;

    static cl_command_buffer_khr CL_API_CALL countCreate(cl_uint num_queues, const cl_command_queue* queues,
                                                         const cl_command_buffer_properties_khr* properties,
                                                         cl_int* errcode_ret)
    {
        ++created;
        return create(num_queues, queues, properties, errcode_ret);
    }

    static cl_int CL_API_CALL countRelease(cl_command_buffer_khr buffer)
    {
        ++released;
        return release(buffer);
    }

    // PoCL opened with the counting table.
    static std::unique_ptr<GpuContext> openPocl()
    {
        const auto candidates = enumerateDevices();
        const auto chosen = chooseDevice(candidates, test::pocl_device);
        REQUIRE(chosen.has_value());
        const DeviceCandidate& candidate = candidates[*chosen];
        VendorEntryPoints table = resolveVendorEntryPoints(candidate.platform);
        create = table.clCreateCommandBufferKHR;
        release = table.clReleaseCommandBufferKHR;
        table.clCreateCommandBufferKHR = countCreate;
        table.clReleaseCommandBufferKHR = countRelease;
        created = released = 0;
        auto gpu = openGpu(candidate, readCapabilities(candidate.device), table, config::GpuConfig{});
        REQUIRE(gpu.has_value());
        return std::move(*gpu);
    }
};

} // namespace

TEST_CASE("auto recording on PoCL is khr")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    std::string why;
    CHECK(chooseRecordingMode(gpu->capabilities(), gpu->vendor(), config::RecordingMode::Auto, &why) ==
          RecordingMode::Khr);
    CHECK(why.empty());
}

TEST_CASE("auto recording on the emulated Adreno is qcom")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    CHECK(chooseRecordingMode(gpu->capabilities(), gpu->vendor(), config::RecordingMode::Auto) ==
          RecordingMode::Qcom);
}

TEST_CASE("gpu.recording = qcom on PoCL falls back to khr and says why")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    std::string why;
    CHECK(chooseRecordingMode(gpu->capabilities(), gpu->vendor(), config::RecordingMode::Qcom, &why) ==
          RecordingMode::Khr);
    CHECK(why == "gpu.recording = qcom: the device has no cl_qcom_recordable_queues; using khr");
}

TEST_CASE("gpu.recording = off stays off on a device that offers every mode")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    std::string why = "stale";
    CHECK(chooseRecordingMode(gpu->capabilities(), gpu->vendor(), config::RecordingMode::Off, &why) ==
          RecordingMode::Off);
    CHECK(why.empty());
}

TEST_CASE("auto recording on a device with neither recording is off, and says why")
{
    std::string why;
    CHECK(chooseRecordingMode(Capabilities{}, VendorEntryPoints{}, config::RecordingMode::Auto, &why) ==
          RecordingMode::Off);
    CHECK(why == "gpu.recording = auto: the device has no cl_qcom_recordable_queues, and the device has no "
                 "cl_khr_command_buffer; each dispatch is enqueued every frame");
}

TEST_CASE("a recording mode whose entry points the table lacks is not chosen")
{
    Capabilities caps;
    caps.command_buffer = true;
    std::string why;
    CHECK(chooseRecordingMode(caps, VendorEntryPoints{}, config::RecordingMode::Khr, &why) == RecordingMode::Off);
    CHECK(why == "gpu.recording = khr: the driver exports no cl_khr_command_buffer entry points; using off");
}

TEST_CASE("off replays three dispatches per frame to the CPU reference")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    ThreeStages stages(*gpu, 3, 2);
    auto replay = replayFor(RecordingMode::Off, *gpu, stages);
    checkFramesAgainstCpu(*replay, stages);
    auto events = replay->enqueue(stages.frame(0, 0), 0);
    REQUIRE(events.has_value());
    CHECK(events->size() == 3); // one per dispatch
    CHECK(cl::WaitForEvents(*events) == CL_SUCCESS);
}

TEST_CASE("khr on PoCL replays command buffers to the CPU reference")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    ThreeStages stages(*gpu, 3, 2);
    auto replay = replayFor(RecordingMode::Khr, *gpu, stages);
    checkFramesAgainstCpu(*replay, stages);
    auto events = replay->enqueue(stages.frame(0, 0), 0);
    REQUIRE(events.has_value());
    CHECK(events->size() == 1); // one for the command buffer
    CHECK(cl::WaitForEvents(*events) == CL_SUCCESS);
}

TEST_CASE("qcom on the emulation replays the recording to the CPU reference")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    ThreeStages stages(*gpu, 3, 2);
    auto replay = replayFor(RecordingMode::Qcom, *gpu, stages);
    checkFramesAgainstCpu(*replay, stages);
    CHECK(emulation.log().argument_errors.empty());
}

TEST_CASE("off, khr and qcom give the same bytes")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    ThreeStages stages(*gpu, 3, 2);
    std::vector<std::vector<std::vector<cl_uint>>> outputs;
    for (RecordingMode mode : {RecordingMode::Off, RecordingMode::Khr, RecordingMode::Qcom}) {
        auto replay = replayFor(mode, *gpu, stages);
        outputs.push_back(checkFramesAgainstCpu(*replay, stages));
    }
    CHECK(outputs[0] == outputs[1]);
    CHECK(outputs[0] == outputs[2]);
}

TEST_CASE("dispatches cut into tiles with global offsets give the CPU reference in off, khr and qcom")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    ThreeStages stages(*gpu, 3, 2);
    constexpr size_t kTiles = 3; // 333, 333 and 331 elements; 336, 336 and 328 for the local size of 8
    for (RecordingMode mode : {RecordingMode::Off, RecordingMode::Khr, RecordingMode::Qcom}) {
        CAPTURE(recordingModeName(mode));
        auto replay = makeReplay(mode, *gpu, 0, tiled(stages.dispatches(), kTiles), tiledUpdates(stages.frame(0, 0), kTiles));
        REQUIRE_MESSAGE(replay.has_value(), (replay ? "" : replay.error().message));
        for (const auto& [input, output] : kFrames)
            CHECK(stages.run(**replay, tiledUpdates(stages.frame(input, output), kTiles), output) ==
                  cpuReference(stages.inputValues(input)));
        if (mode == RecordingMode::Off) {
            auto events = (*replay)->enqueue(tiledUpdates(stages.frame(0, 0), kTiles), 0);
            REQUIRE(events.has_value());
            CHECK(events->size() == 3 * kTiles); // one per tile
            CHECK(cl::WaitForEvents(*events) == CL_SUCCESS);
        }
    }
    CHECK(emulation.log().argument_errors.empty());
    REQUIRE(emulation.log().recordings.size() == 1);
    CHECK(emulation.log().recordings[0].dispatches == 3 * kTiles); // each tile a recorded dispatch
}

TEST_CASE("off applies each frame's plain values, whether they changed, came back or stayed")
{
    // Stage 1's `add` travels with each frame as a plain value, as a plane's offset or
    // stride does, and is skipped where equal to the value last set on that kernel. The
    // frames rotate 3 inputs and 2 outputs over tiles that share their dispatch's kernel.
    auto gpu = test::openTestGpu(test::pocl_device);
    ThreeStages stages(*gpu, 3, 2);
    constexpr size_t kTiles = 2;
    const auto withAdd = [&](size_t input, size_t output, cl_uint add) {
        std::vector<ArgUpdate> updates = stages.frame(input, output);
        ArgUpdate plain{1, 3, sizeof add, {}, false};
        std::memcpy(plain.value.data(), &add, sizeof add);
        updates.push_back(plain);
        return tiledUpdates(updates, kTiles);
    };
    auto replay = makeReplay(RecordingMode::Off, *gpu, 0, tiled(stages.dispatches(), kTiles), withAdd(0, 0, 7));
    REQUIRE_MESSAGE(replay.has_value(), (replay ? "" : replay.error().message));
    const cl_uint adds[] = {7, 7, 9, 7, 9, 9, 4, 4, 7, 9, 4, 7, 7};
    for (size_t frame = 0; frame < std::size(adds); ++frame) {
        const size_t input = frame % 3, output = frame % 2;
        CAPTURE(frame);
        std::vector<cl_uint> expected = stages.inputValues(input);
        for (size_t stage = 0; stage < 3; ++stage)
            for (cl_uint& value : expected)
                value = value * kStages[stage].mul + (stage == 1 ? adds[frame] : kStages[stage].add);
        CHECK(stages.run(**replay, withAdd(input, output, adds[frame]), output) == expected);
    }
}

TEST_CASE("khr records one command buffer per distinct set of frame arguments")
{
    auto gpu = CommandBufferCount::openPocl();
    ThreeStages stages(*gpu, 2, 2);
    auto replay = replayFor(RecordingMode::Khr, *gpu, stages); // records (0, 0) at once
    CHECK(CommandBufferCount::created == 1);
    stages.run(*replay, 0, 0);
    stages.run(*replay, 1, 1);
    CHECK(CommandBufferCount::created == 2);
    CHECK(stages.run(*replay, 0, 0) == cpuReference(stages.inputValues(0)));
    CHECK(stages.run(*replay, 1, 1) == cpuReference(stages.inputValues(1)));
    CHECK(CommandBufferCount::created == 2);
    CHECK(CommandBufferCount::released == 0);
}

TEST_CASE("khr releases the least recently used command buffer beyond eight")
{
    auto gpu = CommandBufferCount::openPocl();
    ThreeStages stages(*gpu, 1, 9);
    {
        auto replay = replayFor(RecordingMode::Khr, *gpu, stages);
        for (size_t output = 0; output < 9; ++output)
            stages.run(*replay, 0, output);
        CHECK(CommandBufferCount::created == 9);
        CHECK(CommandBufferCount::released == 1); // (0, 0), the least recently used
        stages.run(*replay, 0, 8);
        CHECK(CommandBufferCount::created == 9);
        stages.run(*replay, 0, 0);
        CHECK(CommandBufferCount::created == 10);
        CHECK(CommandBufferCount::released == 2);
    }
    CHECK(CommandBufferCount::released == 10); // the rest with the Replay
}

TEST_CASE("khr never replays a command buffer recorded for a buffer that was released")
{
    // A client releases its output buffer and registers another, which a driver may
    // give the released one's cl_mem handle. Replaying the command buffer recorded for
    // the old handle would write freed memory, and the new buffer would stay zero.
    // (PoCL keeps a recorded buffer alive itself, so here this passes without the
    // replay's own reference: the next case checks that reference.)
    auto gpu = test::openTestGpu(test::pocl_device);
    ThreeStages stages(*gpu, 1, 1);
    auto replay = replayFor(RecordingMode::Khr, *gpu, stages);
    const size_t bytes = kElements * sizeof(cl_uint);
    for (int round = 0; round < 8; ++round) {
        cl::Buffer output(gpu->context(), CL_MEM_WRITE_ONLY, bytes);
        const auto frame = std::vector<ArgUpdate>{bufferArgument(0, 0, stages.inputBuffer(0)),
                                                  bufferArgument(2, 1, output)};
        INFO("round " << round);
        CHECK(stages.run(*replay, frame, output) == cpuReference(stages.inputValues(0)));
    } // each output released here, before the next is created
}

TEST_CASE("khr holds a reference of its own on each buffer its cached command buffers name")
{
    // cl_khr_command_buffer leaves the buffers set as kernel arguments unretained, as
    // clSetKernelArg does; a driver may hold them (PoCL does) or not. Measure what this
    // driver holds for a command buffer naming `output`, then check that a cached
    // replay entry holds exactly one reference more, and gives it back with the replay.
    auto gpu = test::openTestGpu(test::pocl_device);
    ThreeStages stages(*gpu, 1, 1);
    const size_t bytes = kElements * sizeof(cl_uint);
    cl::Buffer output(gpu->context(), CL_MEM_WRITE_ONLY, bytes);
    const auto references = [&] { return output.getInfo<CL_MEM_REFERENCE_COUNT>(); };
    const cl_uint alone = references();

    const VendorEntryPoints& vendor = gpu->vendor();
    const std::vector<ReplayDispatch> dispatches = stages.dispatches();
    const cl_kernel kernel = dispatches[2].kernel();
    const cl_mem handle = output();
    REQUIRE(clSetKernelArg(kernel, 1, sizeof(handle), &handle) == CL_SUCCESS);
    const cl_command_queue queue = gpu->queue()();
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr direct = vendor.clCreateCommandBufferKHR(1, &queue, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const size_t global = kElements;
    REQUIRE(vendor.clCommandNDRangeKernelKHR(direct, nullptr, nullptr, kernel, 1, nullptr, &global, nullptr, 0,
                                             nullptr, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(vendor.clFinalizeCommandBufferKHR(direct) == CL_SUCCESS);
    const cl_uint driver_holds = references() - alone;
    REQUIRE(vendor.clReleaseCommandBufferKHR(direct) == CL_SUCCESS);
    REQUIRE(references() == alone);

    {
        auto replay = replayFor(RecordingMode::Khr, *gpu, stages);
        const auto frame = std::vector<ArgUpdate>{bufferArgument(0, 0, stages.inputBuffer(0)),
                                                  bufferArgument(2, 1, output)};
        CHECK(stages.run(*replay, frame, output) == cpuReference(stages.inputValues(0)));
        REQUIRE(gpu->queue().finish() == CL_SUCCESS);
        INFO("the driver holds " << driver_holds << " for a command buffer naming it");
        CHECK(references() == alone + driver_holds + 1);
    }
    CHECK(references() == alone);
}

TEST_CASE("qcom makes one recording per Replay, on a recordable queue of its own")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    ThreeStages stages(*gpu, 3, 2);
    auto first = replayFor(RecordingMode::Qcom, *gpu, stages);
    for (const auto& [input, output] : kFrames)
        stages.run(*first, input, output);
    auto second = replayFor(RecordingMode::Qcom, *gpu, stages);

    const test::EmulationLog& log = emulation.log();
    REQUIRE(log.recordings.size() == 2);
    for (const test::EmulatedRecording& recording : log.recordings) {
        CHECK(recording.dispatches == 3);
        CHECK(recording.ended);
    }
    REQUIRE(log.recordable_queues.size() == 2);
    CHECK(log.recordable_queues[0] != gpu->queue()());
}

TEST_CASE("qcom enqueues the recording once per frame with exactly the frame's updates")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(256 * 1024);
    ThreeStages stages(*gpu, 3, 2);
    auto replay = replayFor(RecordingMode::Qcom, *gpu, stages);
    CHECK(emulation.log().recording_enqueues.empty()); // recording runs nothing

    for (const auto& [input, output] : kFrames)
        stages.run(*replay, input, output);

    const auto& enqueues = emulation.log().recording_enqueues;
    REQUIRE(enqueues.size() == kFrames.size());
    for (size_t i = 0; i < kFrames.size(); ++i) {
        CAPTURE(i);
        CHECK(enqueues[i].recording == 1);
        const std::vector<ArgUpdate> expected = stages.frame(kFrames[i].first, kFrames[i].second);
        REQUIRE(enqueues[i].updates.size() == expected.size());
        for (size_t j = 0; j < expected.size(); ++j) {
            CHECK(enqueues[i].updates[j].dispatch_index == expected[j].dispatch);
            CHECK(enqueues[i].updates[j].arg_index == expected[j].arg_index);
            CHECK(enqueues[i].updates[j].value ==
                  std::vector<uint8_t>(expected[j].value.begin(), expected[j].value.begin() + expected[j].size));
        }
    }
}

TEST_CASE("makeReplay refuses an update naming a dispatch that does not exist")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    ThreeStages stages(*gpu, 1, 1);
    std::vector<ArgUpdate> initial = stages.frame(0, 0);
    initial[1].dispatch = 3;
    auto replay = makeReplay(RecordingMode::Off, *gpu, 0, stages.dispatches(), initial);
    REQUIRE_FALSE(replay.has_value());
    CHECK(replay.error().message == "makeReplay: an argument update names dispatch 3 of 3");
}
