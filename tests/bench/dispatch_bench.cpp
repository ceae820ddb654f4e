// framecl-dispatch-bench: host CPU time to dispatch one frame of a 4-stage pipeline
// (color → offset → offset → offset, ABGR8888 1920x1080) in each recording mode, against
// enqueueing the same kernels naively (every argument set, every kernel enqueued, each
// frame). Only the calling thread's CPU time is counted (CLOCK_THREAD_CPUTIME_ID): the
// cost framecld's event loop pays per frame, not the GPU's (or PoCL's workers') time.
// The qcom row runs on the emulation of tests/support, whose replay is itself a loop of
// clSetKernelArg and clEnqueueNDRangeKernel: it shows the session's side of the cost,
// not a real Adreno driver's. Run with `meson test -C build --benchmark`.
#define DOCTEST_CONFIG_IMPLEMENT // the test-support helpers check with doctest; no test runner here
#include <algorithm>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

#include "gpu_test_support.hpp"
#include "pipeline/session.hpp"
#include "pipeline_test_support.hpp"
#include "qcom_emulation.hpp"
#include "temp_dir.hpp"

using namespace framecl;

namespace {

constexpr uint32_t width = 1920, height = 1080;
constexpr int warmup = 20, frames = 300;

const std::string four_stages = R"(
[[pipeline]]
name = "four"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "offset", amount = 1 },
           { plugin = "offset", amount = 2 }, { plugin = "offset", amount = 3 } ]
)";

double threadMicroseconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e6 + double(now.tv_nsec) / 1e3;
}

struct Stats {
    double median, p90;
};

Stats summarize(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    return {samples[samples.size() / 2], samples[samples.size() * 9 / 10]};
}

struct Frame {
    framecl_frame_layout in_layout{}, out_layout{};
    cl::Buffer in, out;

    explicit Frame(const gpu::GpuContext& gpu)
    {
        const uint64_t in_size = framecl_packed_layout(DRM_FORMAT_ABGR8888, width, height, &in_layout);
        const uint64_t out_size = framecl_packed_layout(DRM_FORMAT_R8, width, height, &out_layout);
        in = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, in_size);
        out = cl::Buffer(gpu.context(), CL_MEM_READ_WRITE, out_size);
    }
};

// Times Session::enqueue: what framecld does per frame once a session is open.
Stats timeSession(const gpu::GpuContext& gpu, const pipeline::PipelineSet& set, gpu::RecordingMode mode)
{
    auto session = pipeline::Session::open(gpu, set.catalog.find("four"), {DRM_FORMAT_ABGR8888, width, height},
                                           {mode, true, {}, 0});
    if (!session)
        throw std::runtime_error(session.error().message);
    Frame frame(gpu);
    std::vector<double> samples;
    for (int i = 0; i < warmup + frames; ++i) {
        const double start = threadMicroseconds();
        auto enqueued = (*session)->enqueue({frame.in(), &frame.in_layout}, {frame.out(), &frame.out_layout});
        const double spent = threadMicroseconds() - start;
        if (!enqueued)
            throw std::runtime_error(enqueued.error().message);
        gpu.queue().finish();
        if (i >= warmup)
            samples.push_back(spent);
    }
    return summarize(samples);
}

// The naive way: the same plans, every argument set and every kernel enqueued on each
// frame, intermediates as plain device buffers; with `events`, an event per kernel as
// the session's off mode takes (for per-stage GPU times).
Stats timeNaive(const gpu::GpuContext& gpu, const pipeline::PipelineSet& set, bool events)
{
    const auto definition = set.catalog.find("four");
    Frame frame(gpu);
    struct Dispatch {
        cl::Kernel kernel;
        framecl_dispatch plan;
        size_t stage;
    };
    std::vector<Dispatch> dispatches;
    std::vector<cl::Buffer> between; // after each stage but the last
    framecl_format format{DRM_FORMAT_ABGR8888, width, height};
    framecl_frame_layout r8{};
    const uint64_t r8_size = framecl_packed_layout(DRM_FORMAT_R8, width, height, &r8);
    for (size_t k = 0; k < definition->stages.size(); ++k) {
        const auto& stage = definition->stages[k];
        auto plan = stage.plugin->plan(format, stage.params);
        if (!plan)
            throw std::runtime_error(plan.error().message);
        for (uint32_t d = 0; d < plan->dispatch_count; ++d) {
            cl_int err = CL_SUCCESS;
            cl::Kernel kernel(clCreateKernel(definition->programs->program(*stage.plugin, plan->dispatches[d].kernel_file),
                                             plan->dispatches[d].kernel, &err));
            dispatches.push_back({kernel, plan->dispatches[d], k});
        }
        format = *stage.plugin->negotiate(format, stage.params);
        if (k + 1 < definition->stages.size())
            between.emplace_back(gpu.context(), CL_MEM_READ_WRITE, r8_size);
    }

    const auto setPlane = [](cl::Kernel& kernel, cl_uint index, cl_mem mem, const framecl_plane& plane) {
        clSetKernelArg(kernel(), index, sizeof mem, &mem);
        clSetKernelArg(kernel(), index + 1, sizeof plane.offset, &plane.offset);
        clSetKernelArg(kernel(), index + 2, sizeof plane.stride, &plane.stride);
    };
    std::vector<double> samples;
    for (int i = 0; i < warmup + frames; ++i) {
        const double start = threadMicroseconds();
        for (auto& d : dispatches) {
            const size_t last = between.size();
            cl_uint index = 0;
            for (uint32_t a = 0; a < d.plan.arg_count; ++a) {
                const framecl_arg& arg = d.plan.args[a];
                if (arg.kind == FRAMECL_ARG_INPUT_PLANE) {
                    d.stage == 0 ? setPlane(d.kernel, index, frame.in(), frame.in_layout.planes[arg.index])
                                 : setPlane(d.kernel, index, between[d.stage - 1](), r8.planes[0]);
                    index += 3;
                } else if (arg.kind == FRAMECL_ARG_OUTPUT_PLANE) {
                    d.stage == last ? setPlane(d.kernel, index, frame.out(), frame.out_layout.planes[arg.index])
                                    : setPlane(d.kernel, index, between[d.stage](), r8.planes[0]);
                    index += 3;
                } else if (arg.kind == FRAMECL_ARG_INT) {
                    clSetKernelArg(d.kernel(), index++, sizeof arg.int_value, &arg.int_value);
                } else {
                    clSetKernelArg(d.kernel(), index++, sizeof arg.uint_value, &arg.uint_value);
                }
            }
            const size_t global[2] = {d.plan.global[0], d.plan.dims > 1 ? d.plan.global[1] : 1};
            cl_event event = nullptr;
            clEnqueueNDRangeKernel(gpu.queue()(), d.kernel(), d.plan.dims, nullptr, global, nullptr, 0, nullptr,
                                   events ? &event : nullptr);
            if (event)
                clReleaseEvent(event);
        }
        const double spent = threadMicroseconds() - start;
        gpu.queue().finish();
        if (i >= warmup)
            samples.push_back(spent);
    }
    return summarize(samples);
}

} // namespace

int main()
{
    // A failed check in a support helper ends the run with its message.
    doctest::Context checks;
    checks.setAsDefaultForAssertsOutOfTestCases();
    checks.setAssertHandler([](const doctest::AssertData& data) {
        throw std::runtime_error(std::string(data.m_expr) + " " + data.m_decomp.c_str());
    });
    const auto config = framecl::test::pipelineConfig(four_stages);
    std::vector<std::pair<std::string, Stats>> rows;
    std::string device;
    {
        auto gpu = framecl::test::openTestGpu();
        device = gpu->capabilities().name;
        framecl::test::TempDir cache_dir;
        gpu::ProgramCache cache(cache_dir.path());
        const auto set = framecl::test::pipelineSet(config, *gpu, cache);
        rows.emplace_back("naive (all arguments, each kernel)", timeNaive(*gpu, set, false));
        rows.emplace_back("naive, with an event per kernel", timeNaive(*gpu, set, true));
        rows.emplace_back("off (changed arguments, each kernel)", timeSession(*gpu, set, gpu::RecordingMode::Off));
        rows.emplace_back("khr (command buffer LRU)", timeSession(*gpu, set, gpu::RecordingMode::Khr));
    }
    {
        framecl::test::QcomEmulation emulation;
        auto gpu = emulation.openGpu(1 << 20);
        framecl::test::TempDir cache_dir;
        gpu::ProgramCache cache(cache_dir.path());
        const auto set = framecl::test::pipelineSet(config, *gpu, cache);
        rows.emplace_back("qcom (emulated recording)", timeSession(*gpu, set, gpu::RecordingMode::Qcom));
    }

    fmt::print("Host CPU time per frame to dispatch a 4-stage pipeline (ABGR8888 {}x{}) on {}, {} frames after {} "
               "warm-up\n\n",
               width, height, device, frames, warmup);
    fmt::print("| mode | median µs | p90 µs | vs naive (median) |\n| --- | ---: | ---: | ---: |\n");
    for (const auto& [name, stats] : rows)
        fmt::print("| {} | {:.1f} | {:.1f} | {:.2f}x |\n", name, stats.median, stats.p90, stats.median / rows[0].second.median);
    return 0;
}
