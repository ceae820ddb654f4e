#include <doctest/doctest.h>

#include "gpu/context.hpp"
#include "gpu_test_support.hpp"

using namespace framecl;
using namespace framecl::gpu;

namespace {

cl_int CL_API_CALL fakeSetPerfHint(cl_context, cl_uint)
{
    return CL_SUCCESS;
}

} // namespace

TEST_CASE("enumeration finds the PoCL device")
{
    const auto candidates = enumerateDevices();
    REQUIRE_FALSE(candidates.empty());
    bool found = false;
    for (const auto& candidate : candidates)
        found = found || candidate.platform_name == "Portable Computing Language";
    CHECK(found);
}

TEST_CASE("openGpu opens PoCL with an in-order profiling queue")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    CHECK(gpu->capabilities().type == DeviceType::Cpu);
    CHECK(gpu->context()() != nullptr);

    cl_command_queue_properties properties = 0;
    REQUIRE(clGetCommandQueueInfo(gpu->queue()(), CL_QUEUE_PROPERTIES, sizeof(properties), &properties,
                                  nullptr) == CL_SUCCESS);
    CHECK((properties & CL_QUEUE_PROFILING_ENABLE) != 0);
    CHECK((properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0);

    cl_device_id queue_device = nullptr;
    REQUIRE(clGetCommandQueueInfo(gpu->queue()(), CL_QUEUE_DEVICE, sizeof(queue_device), &queue_device,
                                  nullptr) == CL_SUCCESS);
    CHECK(queue_device == gpu->device());
}

TEST_CASE("openGpu on PoCL plans no hints")
{
    auto gpu = test::openTestGpu(test::pocl_device);
    CHECK(gpu->hintPlan().context_properties.empty());
    CHECK(gpu->hintPlan().description.find("priority: none") == 0);
}

TEST_CASE("openGpu keeps an injected vendor table instead of resolving one")
{
    VendorEntryPoints emulated;
    emulated.clSetPerfHintQCOM = fakeSetPerfHint;
    auto gpu = openGpu(config::GpuConfig{}, emulated);
    REQUIRE(gpu.has_value());
    // doctest cannot print function pointers: compare outside the assertion.
    const bool kept_fake = (*gpu)->vendor().clSetPerfHintQCOM == fakeSetPerfHint;
    const bool resolved_none = (*gpu)->vendor().clCreateCommandBufferKHR == nullptr;
    CHECK(kept_fake);
    CHECK(resolved_none); // PoCL exports it: the table was not resolved
}

TEST_CASE("openGpu on a chosen candidate keeps the injected capability record")
{
    const auto candidates = enumerateDevices();
    auto chosen = chooseDevice(candidates, "auto");
    REQUIRE(chosen.has_value());
    Capabilities caps = readCapabilities(candidates[*chosen].device);
    caps.recordable_queues = true; // what an emulated Adreno would claim
    caps.onchip_global_memory_size = 256 * 1024;

    auto gpu = openGpu(candidates[*chosen], caps, VendorEntryPoints{}, config::GpuConfig{});
    REQUIRE(gpu.has_value());
    CHECK((*gpu)->capabilities().recordable_queues);
    CHECK((*gpu)->capabilities().onchip_global_memory_size == 256 * 1024);
}

TEST_CASE("openGpu with an unknown device name fails and lists the devices")
{
    config::GpuConfig config;
    config.device = "no-such-device";
    auto gpu = openGpu(config);
    REQUIRE_FALSE(gpu.has_value());
    CHECK(gpu.error().message.find("'no-such-device'") != std::string::npos);
    CHECK(gpu.error().message.find("Portable Computing Language") != std::string::npos);
}
