// The plugins' kernels built on the test device (PoCL in CI), and their plans run there
// against the CPU references.
#include <fstream>
#include <random>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "pipeline/kernel_source.hpp"
#include "pipeline/plugin_params.hpp"
#include "pipeline_test_support.hpp"
#include "plugin_test_support.hpp"
#include "reference_color.hpp"
#include "reference_offset.hpp"
#include "temp_dir.hpp"

using namespace framecl;
using pipeline::Plugin;
using pipeline::PluginPrograms;
using pipeline::PluginRegistry;

namespace {

const gpu::GpuContext& testGpu()
{
    static const auto gpu = test::openTestGpu();
    return *gpu;
}

gpu::ProgramCache& testCache()
{
    static test::TempDir dir;
    static gpu::ProgramCache cache(dir.path());
    return cache;
}

// The names of every plugin of `registry`.
std::set<std::string> everyPlugin(const PluginRegistry& registry)
{
    std::set<std::string> names;
    for (const Plugin* plugin : registry.plugins())
        names.insert(plugin->name());
    return names;
}

// Every plugin of the build, shipped and test, with its kernels built.
struct Loaded {
    std::shared_ptr<const PluginRegistry> registry;
    std::shared_ptr<const PluginPrograms> programs;
};

const Loaded& loaded()
{
    static const Loaded all = [] {
        auto registry = PluginRegistry::load({test::pluginDir(), test::testPluginDir()});
        auto programs =
            PluginPrograms::build(registry, testGpu(), testCache(), test::testKernelDirs(), everyPlugin(*registry));
        return Loaded{registry, programs};
    }();
    return all;
}

const Plugin& plugin(const std::string& name)
{
    const Plugin* found = loaded().registry->find(name);
    REQUIRE(found);
    return *found;
}

void setArg(const cl::Kernel& kernel, cl_uint index, size_t size, const void* value)
{
    REQUIRE(clSetKernelArg(kernel(), index, size, value) == CL_SUCCESS);
}

// Runs `plugin`'s plan for `in` with `params` on packed frames, as the daemon would bind
// it, and returns the output frame's bytes.
std::vector<uint8_t> runPlan(const Plugin& plugin, const pipeline::ResolvedParams& params,
                             const framecl_format& in, const std::vector<uint8_t>& input)
{
    auto out = plugin.negotiate(in, params);
    REQUIRE_MESSAGE(out, (out ? "" : out.error().message));
    auto plan = plugin.plan(in, params);
    REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
    REQUIRE(plan->intermediate_count == 0);

    framecl_frame_layout in_layout{}, out_layout{};
    REQUIRE(framecl_packed_layout(in.fourcc, in.width, in.height, &in_layout) == input.size());
    std::vector<uint8_t> output(
        framecl_packed_layout(out->fourcc, out->width, out->height, &out_layout));
    const gpu::GpuContext& gpu = testGpu();
    cl_int err = CL_SUCCESS;
    cl::Buffer src(gpu.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, input.size(),
                   const_cast<uint8_t*>(input.data()), &err);
    REQUIRE(err == CL_SUCCESS);
    cl::Buffer dst(gpu.context(), CL_MEM_WRITE_ONLY, output.size(), nullptr, &err);
    REQUIRE(err == CL_SUCCESS);

    for (uint32_t d = 0; d < plan->dispatch_count; ++d) {
        const framecl_dispatch& dispatch = plan->dispatches[d];
        cl_program program = loaded().programs->program(plugin, dispatch.kernel_file);
        REQUIRE(program);
        cl::Kernel kernel(clCreateKernel(program, dispatch.kernel, &err));
        REQUIRE(err == CL_SUCCESS);
        cl_uint index = 0;
        for (uint32_t a = 0; a < dispatch.arg_count; ++a) {
            const framecl_arg& arg = dispatch.args[a];
            if (arg.kind == FRAMECL_ARG_INPUT_PLANE || arg.kind == FRAMECL_ARG_OUTPUT_PLANE) {
                const bool input_plane = arg.kind == FRAMECL_ARG_INPUT_PLANE;
                const cl_mem mem = input_plane ? src() : dst();
                const framecl_plane& plane =
                    (input_plane ? in_layout : out_layout).planes[arg.index];
                setArg(kernel, index++, sizeof mem, &mem);
                setArg(kernel, index++, sizeof plane.offset, &plane.offset);
                setArg(kernel, index++, sizeof plane.stride, &plane.stride);
            } else if (arg.kind == FRAMECL_ARG_UINT) {
                setArg(kernel, index++, sizeof arg.uint_value, &arg.uint_value);
            } else if (arg.kind == FRAMECL_ARG_INT) {
                setArg(kernel, index++, sizeof arg.int_value, &arg.int_value);
            } else {
                FAIL("argument kind " << arg.kind << " is not used by the plugins under test");
            }
        }
        const cl::NDRange global = dispatch.dims == 2
                                       ? cl::NDRange(dispatch.global[0], dispatch.global[1])
                                       : cl::NDRange(dispatch.global[0]);
        REQUIRE(gpu.queue().enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NullRange) ==
                CL_SUCCESS);
    }
    REQUIRE(gpu.queue().enqueueReadBuffer(dst, CL_TRUE, 0, output.size(), output.data()) ==
            CL_SUCCESS);
    return output;
}

std::vector<uint8_t> randomBytes(size_t size, uint32_t seed)
{
    std::mt19937 random(seed);
    std::vector<uint8_t> bytes(size);
    for (auto& byte : bytes)
        byte = uint8_t(random());
    return bytes;
}

} // namespace

TEST_CASE("a plugin whose kernel does not compile is unusable, with its build log, while the "
          "others build")
{
    const PluginPrograms& programs = *loaded().programs;
    for (const char* name : {"copy", "color", "offset"}) {
        CAPTURE(name);
        CHECK(programs.usable(plugin(name)));
        CHECK(programs.program(plugin(name), 0));
    }
    CHECK_FALSE(programs.usable(plugin("broken_kernel")));
    CHECK_FALSE(programs.program(plugin("broken_kernel"), 0));
    REQUIRE(programs.problems().size() == 1);
    const std::string& problem = programs.problems()[0];
    CHECK(problem.starts_with("plugin 'broken_kernel' (" +
                              (test::testPluginDir() / "broken_kernel.so").string() +
                              ") is not usable: broken_kernel.cl: clBuildProgram failed"));
    CHECK(problem.find("expected ';'") != std::string::npos); // the compiler's build log
    // The prelude goes in front of the file, and #line keeps the file's own name and
    // line numbers in the log: the missing semicolon ends line 6.
    CHECK(problem.find("broken_kernel.cl:6:") != std::string::npos);
}

TEST_CASE("the daemon builds the programs of the plugins its pipelines use, and no other's")
{
    // Broken_kernel's file does not compile: unbuilt, it is no problem.
    test::TempDir cache_dir;
    gpu::ProgramCache cache(cache_dir.path());
    const auto set = pipeline::loadPipelineSet(
        test::pipelineConfig("[[pipeline]]\nname = \"luma\"\nstages = [ { plugin = \"color\", op = \"abgr_to_y\" } ]\n"),
        &testGpu(), &cache);
    for (const char* name : {"copy", "color"}) { // copy: offered whatever the config says
        CAPTURE(name);
        CHECK(set.programs->program(*set.registry->find(name), 0));
    }
    for (const char* name : {"epsilon", "convolve", "offset", "broken_kernel"}) {
        CAPTURE(name);
        CHECK_FALSE(set.programs->usable(*set.registry->find(name)));
    }
    CHECK(set.programs->problems().empty());
    REQUIRE(set.catalog.find("luma"));
    CHECK(set.catalog.find("copy"));
}

TEST_CASE("an edit to the kernel prelude rebuilds the programs built with it, however alike the files")
{
    // A kernel file that returns a value the prelude defines, built through one cache
    // three times: with the prelude as written, after an edit that keeps its size, and
    // again with nothing changed.
    test::TempDir dir;
    const std::filesystem::path kernels = dir.path() / "kernels";
    std::filesystem::create_directory(kernels);
    const auto writePrelude = [&](char value) {
        std::ofstream(kernels / pipeline::kernel_prelude_file) << "#define FRAMECL_TEST_VALUE " << value << "\n";
    };
    std::ofstream(kernels / "value.cl") << "__kernel void value(__global int* out) { out[0] = FRAMECL_TEST_VALUE; }\n";
    gpu::ProgramCache cache(dir.path() / "cache");
    const gpu::GpuContext& gpu = testGpu();
    const auto buildAndRun = [&](gpu::BuiltProgram::Origin expected_origin) {
        auto source = pipeline::readKernelSource({kernels}, "value.cl");
        REQUIRE_MESSAGE(source, (source ? "" : source.error().message));
        auto built = cache.build(gpu.context()(), gpu.device(), gpu.capabilities(), *source, "value.cl", "");
        REQUIRE_MESSAGE(built, (built ? "" : built.error().message));
        CHECK(built->origin == expected_origin);
        cl_int err = CL_SUCCESS;
        cl::Kernel kernel(built->program, "value", &err);
        REQUIRE(err == CL_SUCCESS);
        cl::Buffer out(gpu.context(), CL_MEM_WRITE_ONLY, sizeof(cl_int));
        setArg(kernel, 0, sizeof(cl_mem), &out());
        REQUIRE(gpu.queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(1)) == CL_SUCCESS);
        cl_int value = 0;
        REQUIRE(gpu.queue().enqueueReadBuffer(out, CL_TRUE, 0, sizeof value, &value) == CL_SUCCESS);
        return value;
    };
    using Origin = gpu::BuiltProgram::Origin;
    writePrelude('1');
    CHECK(buildAndRun(Origin::BuiltFromSource) == 1);
    writePrelude('2');
    CHECK(buildAndRun(Origin::BuiltFromSource) == 2);
    CHECK(buildAndRun(Origin::CacheHit) == 2);
}

TEST_CASE("kernels without the prelude in any kernel directory are refused, naming it")
{
    test::TempDir dir;
    std::ofstream(dir.path() / "value.cl") << "__kernel void value(__global int* out) { out[0] = 1; }\n";
    const auto source = pipeline::readKernelSource({dir.path()}, "value.cl");
    REQUIRE_FALSE(source);
    CHECK(source.error().message.find("kernel file 'prelude.cl' not found in daemon.kernel_dirs (" +
                                      dir.path().string() + ")") != std::string::npos);
}

TEST_CASE("a plugin whose kernel file is in no kernel directory is unusable, naming the file")
{
    test::TempDir cache_dir;
    gpu::ProgramCache cache(cache_dir.path());
    const auto registry = PluginRegistry::load({test::testPluginDir()});
    const auto programs =
        PluginPrograms::build(registry, testGpu(), cache, {test::requireSourceRoot() / "kernels"}, {"copy", "offset"});
    const Plugin& offset = *registry->find("offset");
    CHECK_FALSE(programs->usable(offset));
    CHECK(test::problemWith(programs->problems(), "plugin 'offset'")
              .find("kernel file 'offset.cl' not found") != std::string::npos);
    CHECK(programs->usable(*registry->find("copy")));
}

TEST_CASE("offset's plan on the device matches the CPU reference, saturating at both ends")
{
    const Plugin& offset = plugin("offset");
    const framecl_format in{DRM_FORMAT_R8, 37, 13}; // no multiple of any work-group size
    const std::vector<uint8_t> input = randomBytes(37 * 13, 4);
    for (int64_t amount : {int64_t(0), int64_t(100), int64_t(-100), int64_t(255), int64_t(-255)}) {
        CAPTURE(amount);
        auto params = pipeline::resolveParams(offset, {test::stageParameter("amount", amount)});
        REQUIRE(params);
        CHECK(runPlan(offset, *params, in, input) == test::offsetPlane(input, int(amount)));
    }
}

TEST_CASE("color's plan on the device gives the BT.601 luma of the reference")
{
    const Plugin& color = plugin("color");
    auto params = pipeline::resolveParams(color, {});
    REQUIRE(params);
    const framecl_format in{DRM_FORMAT_ABGR8888, 41, 9};
    const std::vector<uint8_t> input = randomBytes(41 * 9 * 4, 7);
    CHECK(runPlan(color, *params, in, input) == reference::lumaPlane(input));
}

TEST_CASE("copy's plan on the device copies every plane of an NV12 frame")
{
    const Plugin& copy = plugin("copy");
    const framecl_format in{DRM_FORMAT_NV12, 34, 6};
    const std::vector<uint8_t> input = randomBytes(34 * 6 * 3 / 2, 9);
    CHECK(runPlan(copy, {}, in, input) == input);
}
