#include <doctest/doctest.h>


#include "gpu/vendor_extensions.hpp"
#include "qcom_emulation.hpp"

using namespace framecl;
using namespace framecl::gpu;

namespace {

constexpr uint64_t kOnchipBytes = 256 * 1024;

bool hasPair(const std::vector<cl_context_properties>& properties, cl_context_properties key,
             cl_context_properties value)
{
    for (size_t i = 0; i + 1 < properties.size(); i += 2)
        if (properties[i] == key && properties[i + 1] == value)
            return true;
    return false;
}

cl_mem onchipBuffer(const GpuContext& gpu, uint64_t offset, size_t size, cl_int* err)
{
    const cl_mem_properties properties[] = {CL_MEM_ONCHIP_GLOBAL_QCOM, 1, CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM, offset, 0};
    return gpu.vendor().clCreateBufferWithProperties(gpu.context()(), properties, CL_MEM_READ_WRITE, size, nullptr,
                                                     err);
}

// An emulated Adreno with a recordable queue and a one-argument kernel to record.
struct Recordable {
    test::QcomEmulation emulation;
    std::unique_ptr<GpuContext> gpu = emulation.openGpu(kOnchipBytes);
    const VendorEntryPoints& vendor = gpu->vendor();
    cl::CommandQueue queue;
    cl::Program program;
    cl::Kernel kernel;
    cl::Buffer buffer;

    Recordable()
    {
        const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_RECORDABLE_QCOM, 0};
        cl_int err = CL_SUCCESS;
        queue = cl::CommandQueue(
            vendor.clCreateCommandQueueWithProperties(gpu->context()(), gpu->device(), properties, &err));
        REQUIRE(err == CL_SUCCESS);
        program = cl::Program(gpu->context(), "kernel void one(global uint* p) { p[get_global_id(0)] = 1; }");
        REQUIRE(program.build() == CL_SUCCESS);
        kernel = cl::Kernel(program, "one", &err);
        REQUIRE(err == CL_SUCCESS);
        buffer = cl::Buffer(gpu->context(), CL_MEM_READ_WRITE, 16 * sizeof(cl_uint));
        const cl_mem handle = buffer();
        REQUIRE(clSetKernelArg(kernel(), 0, sizeof(handle), &handle) == CL_SUCCESS);
    }

    cl_int recordOne() const
    {
        const size_t global = 16;
        return vendor.clEnqueueNDRangeKernel(queue(), kernel(), 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    }

    // A recording of one dispatch, ended.
    cl_recording_qcom recorded() const
    {
        cl_int err = CL_SUCCESS;
        cl_recording_qcom recording = vendor.clNewRecordingQCOM(queue(), &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(recordOne() == CL_SUCCESS);
        REQUIRE(vendor.clEndRecordingQCOM(recording) == CL_SUCCESS);
        return recording;
    }

    cl_int enqueue(cl_command_queue live, cl_recording_qcom recording, const cl_array_arg_qcom* arg) const
    {
        cl_event event = nullptr;
        const cl_int err = vendor.clEnqueueRecordingQCOM(live, recording, arg ? 1 : 0, arg, 0, nullptr, 0, nullptr,
                                                         0, nullptr, 0, nullptr, &event);
        if (event)
            clReleaseEvent(event);
        return err;
    }

    bool refused(cl_int code) const
    {
        const auto& errors = emulation.log().argument_errors;
        return !errors.empty() && errors.back().code == code;
    }
};

} // namespace

TEST_CASE("the emulated Adreno's context is created with the configured hint properties")
{
    test::QcomEmulation emulation;
    config::GpuConfig config;
    config.perf_hint = config::PerfHint::High;
    config.priority_hint = config::PriorityHint::Low;
    auto gpu = emulation.openGpu(kOnchipBytes, config);
    REQUIRE(emulation.log().context_properties.size() == 1);
    const auto& properties = emulation.log().context_properties[0];
    CHECK(hasPair(properties, CL_CONTEXT_PERF_HINT_QCOM, CL_PERF_HINT_HIGH_QCOM));
    CHECK(hasPair(properties, CL_CONTEXT_PRIORITY_HINT_QCOM, CL_PRIORITY_HINT_LOW_QCOM));
    CHECK(emulation.log().argument_errors.empty());
}

TEST_CASE("the emulated Adreno reports the Qualcomm extensions")
{
    test::QcomEmulation emulation;
    const Capabilities caps = emulation.emulatedCapabilities(Capabilities{}, kOnchipBytes);
    CHECK(caps.recordable_queues);
    CHECK(caps.onchip_global_memory);
    CHECK(caps.onchip_global_memory_size == kOnchipBytes);
    CHECK(caps.qcom_perf_hint);
    CHECK(caps.qcom_priority_hint);
    CHECK(caps.hasExtension("cl_qcom_recordable_queues"));
    CHECK(caps.hasExtension("cl_qcom_onchip_global_memory"));
}

TEST_CASE("an on-chip buffer within the emulated size is created and logged")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes);
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer(onchipBuffer(*gpu, 192 * 1024, 64 * 1024, &err));
    CHECK(err == CL_SUCCESS);
    REQUIRE(emulation.log().onchip_buffers.size() == 1);
    CHECK(emulation.log().onchip_buffers[0].offset == 192 * 1024);
    CHECK(emulation.log().onchip_buffers[0].size == 64 * 1024);
}

TEST_CASE("an on-chip buffer beyond the emulated size is refused")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes);
    cl_int err = CL_SUCCESS;
    CHECK(onchipBuffer(*gpu, 192 * 1024, 64 * 1024 + 1, &err) == nullptr);
    CHECK(err == CL_INVALID_BUFFER_SIZE);
    CHECK(emulation.log().onchip_buffers.empty());
    REQUIRE(emulation.log().argument_errors.size() == 1);
    CHECK(emulation.log().argument_errors[0].call == "clCreateBufferWithProperties");
}

TEST_CASE("clSetPerfHintQCOM logs each hint and refuses an unknown one")
{
    test::QcomEmulation emulation;
    auto gpu = emulation.openGpu(kOnchipBytes);
    CHECK(gpu->vendor().clSetPerfHintQCOM(gpu->context()(), CL_PERF_HINT_LOW_QCOM) == CL_SUCCESS);
    CHECK(gpu->vendor().clSetPerfHintQCOM(gpu->context()(), CL_PERF_HINT_HIGH_QCOM) == CL_SUCCESS);
    CHECK(gpu->vendor().clSetPerfHintQCOM(gpu->context()(), 0x1234) == CL_INVALID_VALUE);
    CHECK(emulation.log().perf_hints == std::vector<cl_uint>{CL_PERF_HINT_LOW_QCOM, CL_PERF_HINT_HIGH_QCOM});
}

TEST_CASE("an NDRange on a recordable queue with no recording open is refused")
{
    Recordable recordable;
    CHECK(recordable.recordOne() == CL_INVALID_OPERATION);
    CHECK(recordable.refused(CL_INVALID_OPERATION));
}

TEST_CASE("a recording on a queue that is not recordable is refused")
{
    Recordable recordable;
    cl_int err = CL_SUCCESS;
    CHECK(recordable.vendor.clNewRecordingQCOM(recordable.gpu->queue()(), &err) == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
}

TEST_CASE("a recording cannot be ended twice")
{
    Recordable recordable;
    cl_recording_qcom recording = recordable.recorded();
    CHECK(recordable.vendor.clEndRecordingQCOM(recording) == CL_INVALID_OPERATION);
    CHECK(recordable.vendor.clReleaseRecordingQCOM(recording) == CL_SUCCESS);
}

TEST_CASE("a recording is replayed only on a live queue, once it has ended")
{
    Recordable recordable;
    cl_int err = CL_SUCCESS;
    cl_recording_qcom open = recordable.vendor.clNewRecordingQCOM(recordable.queue(), &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(recordable.enqueue(recordable.gpu->queue()(), open, nullptr) == CL_INVALID_OPERATION);
    REQUIRE(recordable.vendor.clEndRecordingQCOM(open) == CL_SUCCESS);
    CHECK(recordable.enqueue(recordable.queue(), open, nullptr) == CL_INVALID_OPERATION);
    CHECK(recordable.enqueue(recordable.gpu->queue()(), open, nullptr) == CL_SUCCESS);
    CHECK(recordable.emulation.log().recording_enqueues.size() == 1);
    CHECK(recordable.vendor.clReleaseRecordingQCOM(open) == CL_SUCCESS);
}

TEST_CASE("an update naming a dispatch beyond the recording is refused")
{
    Recordable recordable;
    cl_recording_qcom recording = recordable.recorded();
    const cl_mem handle = recordable.buffer();
    const cl_array_arg_qcom beyond{1, 0, sizeof(handle), &handle};
    CHECK(recordable.enqueue(recordable.gpu->queue()(), recording, &beyond) == CL_INVALID_VALUE);
    CHECK(recordable.refused(CL_INVALID_VALUE));
    CHECK(recordable.emulation.log().recording_enqueues.empty());
    CHECK(recordable.vendor.clReleaseRecordingQCOM(recording) == CL_SUCCESS);
}
