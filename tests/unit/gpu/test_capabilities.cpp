#include <doctest/doctest.h>

#include "gpu/capabilities.hpp"
#include "gpu/device_selection.hpp"
#include "gpu/vendor_entry_points.hpp"
#include "gpu_test_support.hpp"

using namespace framecl::gpu;

namespace {

// PoCL, picked by name: these tests check what PoCL reports.
DeviceCandidate poclDevice()
{
    const auto candidates = enumerateDevices();
    auto chosen = chooseDevice(candidates, framecl::test::pocl_device);
    REQUIRE_MESSAGE(chosen.has_value(), (chosen ? "" : chosen.error().message));
    return candidates[*chosen];
}

// doctest cannot print a function pointer; compare outside the assertion.
template <typename Function> bool resolved(Function function)
{
    return function != nullptr;
}

} // namespace

TEST_CASE("capabilities read from PoCL report command buffers and images but no fp16")
{
    const Capabilities caps = readCapabilities(poclDevice().device);
    CHECK(caps.command_buffer);
    CHECK_FALSE(caps.command_buffer_mutable_dispatch);
    CHECK(caps.images);
    CHECK_FALSE(caps.fp16);
}

TEST_CASE("capabilities read from PoCL describe a unified-memory CPU with its limits")
{
    const Capabilities caps = readCapabilities(poclDevice().device);
    CHECK(caps.type == DeviceType::Cpu);
    CHECK(caps.unified_memory);
    CHECK(caps.opencl_version.rfind("OpenCL ", 0) == 0);
    CHECK_FALSE(caps.name.empty());
    CHECK_FALSE(caps.driver_version.empty());
    CHECK(caps.max_work_group_size > 0);
    CHECK(caps.max_compute_units > 0);
    CHECK(caps.global_mem_size > 0);
    CHECK(caps.global_cache_line_size > 0);
    CHECK(caps.max_alloc_size > 0);
    CHECK(caps.hasExtension("cl_khr_command_buffer"));
}

TEST_CASE("capabilities read from PoCL report no Qualcomm extension and leave their sizes at zero")
{
    const Capabilities caps = readCapabilities(poclDevice().device);
    CHECK_FALSE(caps.recordable_queues);
    CHECK(caps.recordable_queue_max_size == 0);
    CHECK_FALSE(caps.onchip_global_memory);
    CHECK(caps.onchip_global_memory_size == 0);
    CHECK_FALSE(caps.qcom_perf_hint);
    CHECK_FALSE(caps.qcom_priority_hint);
    CHECK_FALSE(caps.qcom_dmabuf_host_ptr);
    CHECK_FALSE(caps.subgroups); // PoCL 3.1 on CPU: CL_DEVICE_MAX_NUM_SUB_GROUPS = 0
}

TEST_CASE("the vendor table resolved on PoCL has the command-buffer entry points and no Qualcomm ones")
{
    const VendorEntryPoints table = resolveVendorEntryPoints(poclDevice().platform);
    CHECK(resolved(table.clCreateCommandBufferKHR));
    CHECK(resolved(table.clFinalizeCommandBufferKHR));
    CHECK(resolved(table.clEnqueueCommandBufferKHR));
    CHECK(resolved(table.clCommandNDRangeKernelKHR));
    CHECK_FALSE(resolved(table.clSetPerfHintQCOM));
    CHECK_FALSE(resolved(table.clNewRecordingQCOM));
    CHECK_FALSE(resolved(table.clEnqueueRecordingQCOM));
}
