// cl_khr_external_memory_dma_buf on real dma-bufs (vgem, in the guest), with a device
// that offers it emulated on PoCL through the vendor table: clCreateBufferWithProperties
// with a dma-buf handle maps the fd and wraps the mapping, as a driver sharing host
// memory would, and the acquire and release entry points are logged markers. A frame
// must acquire both buffers before its commands and release them after
// (cl_khr_external_memory: a use without them is undefined).
#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "framecl/client.h"
#include "gpu/device_selection.hpp"
#include "gpu/program_cache.hpp"
#include "gpu_test_support.hpp"
#include "guest_daemon.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/client_frame.hpp"
#include "temp_dir.hpp"

using namespace framecl;
using framecl::test::vgemBuffer;

namespace {

// What reached the emulated device, in order: "acquire", "release" (one per buffer,
// with the buffer), "frame" (the frame's command buffer).
struct Logged {
    std::string call;
    cl_mem mem = nullptr;
    bool operator==(const Logged&) const = default;
};

struct KhrExternalMemory {
    static inline std::vector<Logged> log;
    // The next acquire or release of this buffer fails (a driver out of resources), once.
    static inline std::optional<Logged> fail_once;
    static inline std::vector<std::pair<void*, size_t>> mappings;
    static inline clEnqueueCommandBufferKHR_fn enqueue_command_buffer = nullptr;

    static cl_mem CL_API_CALL create(cl_context context, const cl_mem_properties* properties, cl_mem_flags flags,
                                     size_t size, void* host, cl_int* err)
    {
        if (!properties || properties[0] != CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR)
            return ::clCreateBufferWithProperties(context, properties, flags, size, host, err);
        void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, int(properties[1]), 0);
        if (mapping == MAP_FAILED) {
            *err = CL_INVALID_VALUE;
            return nullptr;
        }
        mappings.emplace_back(mapping, size);
        return clCreateBuffer(context, flags | CL_MEM_USE_HOST_PTR, size, mapping, err);
    }

    static cl_int marker(const char* call, cl_command_queue queue, cl_uint count, const cl_mem* mems,
                         cl_uint waits, const cl_event* wait_list, cl_event* event)
    {
        if (fail_once && count > 0 && fail_once == Logged{call, mems[0]}) {
            fail_once.reset();
            return CL_OUT_OF_RESOURCES;
        }
        for (cl_uint i = 0; i < count; ++i)
            log.push_back({call, mems[i]});
        return clEnqueueMarkerWithWaitList(queue, waits, wait_list, event);
    }
    static cl_int CL_API_CALL acquire(cl_command_queue queue, cl_uint count, const cl_mem* mems, cl_uint waits,
                                      const cl_event* wait_list, cl_event* event)
    {
        return marker("acquire", queue, count, mems, waits, wait_list, event);
    }
    static cl_int CL_API_CALL release(cl_command_queue queue, cl_uint count, const cl_mem* mems, cl_uint waits,
                                      const cl_event* wait_list, cl_event* event)
    {
        return marker("release", queue, count, mems, waits, wait_list, event);
    }
    static cl_int CL_API_CALL frame(cl_uint queues, cl_command_queue* queue_list, cl_command_buffer_khr buffer,
                                    cl_uint waits, const cl_event* wait_list, cl_event* event)
    {
        log.push_back({"frame", nullptr});
        return enqueue_command_buffer(queues, queue_list, buffer, waits, wait_list, event);
    }
};

std::unique_ptr<gpu::GpuContext> openEmulatedKhrDevice()
{
    const auto candidates = gpu::enumerateDevices();
    const auto chosen = gpu::chooseDevice(candidates, test::pocl_device);
    REQUIRE(chosen.has_value());
    const gpu::DeviceCandidate& candidate = candidates[*chosen];
    gpu::Capabilities caps = gpu::readCapabilities(candidate.device);
    caps.khr_external_memory_dma_buf = true;
    gpu::VendorEntryPoints table = gpu::resolveVendorEntryPoints(candidate.platform);
    REQUIRE(bool(table.clEnqueueCommandBufferKHR));
    table.clCreateBufferWithProperties = KhrExternalMemory::create;
    table.clEnqueueAcquireExternalMemObjectsKHR = KhrExternalMemory::acquire;
    table.clEnqueueReleaseExternalMemObjectsKHR = KhrExternalMemory::release;
    KhrExternalMemory::enqueue_command_buffer = table.clEnqueueCommandBufferKHR;
    table.clEnqueueCommandBufferKHR = KhrExternalMemory::frame;
    auto gpu = gpu::openGpu(candidate, caps, table, config::GpuConfig{});
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

} // namespace

TEST_CASE("khr-dmabuf: each frame acquires its buffers before its commands and releases them after, each once "
          "whatever fails")
{
    auto gpu = openEmulatedKhrDevice();
    test::TempDir dir;
    const auto file = dir.write("framecld.toml", "[daemon]\ncache_dir = \"" + (dir / "cache").string() +
                                                     "\"\npipeline_dirs = []\nplugin_dirs = []\n");
    auto config = config::loadConfigFile(file, config::defaultPaths());
    REQUIRE_MESSAGE(config.has_value(), (config ? "" : config.error().joined()));
    gpu::ProgramCache programs(config->daemon.cache_dir);
    const auto set = pipeline::loadPipelineSet(*config, gpu.get(), &programs);
    REQUIRE(set.problems.empty());

    constexpr uint32_t w = 75, h = 41; // as the other cases' ABGR8888: kernels the guest has compiled
    framecl_frame_layout layout{};
    const uint64_t bytes = framecl_packed_layout(DRM_FORMAT_ABGR8888, w, h, &layout);
    const UniqueFd in_fd = vgemBuffer(bytes), out_fd = vgemBuffer(bytes);
    const auto imported = [&](const UniqueFd& fd) {
        auto buffer = memory::importBuffer(*gpu, UniqueFd(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0)), layout, UINT64_MAX);
        REQUIRE_MESSAGE(buffer.has_value(), (buffer ? "" : buffer.error().message));
        CHECK((*buffer)->path() == memory::ImportPath::KhrDmabuf);
        return *buffer;
    };
    std::vector<uint8_t> pixels(bytes);
    for (size_t i = 0; i < bytes; ++i)
        pixels[i] = uint8_t(i * 13 + 1);
    const auto mapped = [&](const UniqueFd& fd) {
        void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
        REQUIRE(mapping != MAP_FAILED);
        return static_cast<uint8_t*>(mapping);
    };
    uint8_t* in_bytes = mapped(in_fd);
    uint8_t* out_bytes = mapped(out_fd);
    REQUIRE(framecl_begin_cpu_access(in_fd.get(), FRAMECL_CPU_WRITE) == 0);
    std::memcpy(in_bytes, pixels.data(), bytes);
    REQUIRE(framecl_end_cpu_access(in_fd.get(), FRAMECL_CPU_WRITE) == 0);
    {
        const auto in = imported(in_fd), out = imported(out_fd);
        auto session = pipeline::Session::open(*gpu, set.catalog.find("copy"), {DRM_FORMAT_ABGR8888, w, h},
                                               {gpu::RecordingMode::Khr, true, {}, 0});
        REQUIRE_MESSAGE(session.has_value(), (session ? "" : session.error().message));
        for (int frame = 0; frame < 2; ++frame) {
            KhrExternalMemory::log.clear();
            auto enqueued = pipeline::enqueueClientFrame(**session, *in, *out);
            REQUIRE_MESSAGE(enqueued.has_value(), (enqueued ? "" : enqueued.error().message));
            REQUIRE(enqueued->done.wait() == CL_SUCCESS);
            const std::vector<Logged> expected{{"acquire", in->mem()},
                                               {"acquire", out->mem()},
                                               {"frame", nullptr},
                                               {"release", in->mem()},
                                               {"release", out->mem()}};
            CHECK(KhrExternalMemory::log == expected);
            // The frame ends with its last release.
            cl_command_type type = 0;
            REQUIRE(enqueued->done.getInfo(CL_EVENT_COMMAND_TYPE, &type) == CL_SUCCESS);
            CHECK(type == CL_COMMAND_MARKER);
        }

        // The output's acquire fails after the input's: the abandoned frame releases the
        // input, which would otherwise stay acquired for ever.
        KhrExternalMemory::log.clear();
        KhrExternalMemory::fail_once = Logged{"acquire", out->mem()};
        auto frame = pipeline::beginClientFrame(**session, *in, *out);
        REQUIRE(frame.has_value());
        CHECK_FALSE(pipeline::enqueueClientPart(**session, *in, *out, *frame, (*session)->lanes().front()));
        auto end = pipeline::abandonClientFrame(**session, *in, *out, *frame);
        REQUIRE_MESSAGE(end.has_value(), (end ? "" : end.error().message));
        REQUIRE(end->has_value());
        REQUIRE((**end).wait() == CL_SUCCESS);
        CHECK(KhrExternalMemory::log == std::vector<Logged>{{"acquire", in->mem()}, {"release", in->mem()}});

        // The output's release fails after the input's: the abandoned frame releases the
        // output alone, not the input a second time.
        KhrExternalMemory::log.clear();
        KhrExternalMemory::fail_once = Logged{"release", out->mem()};
        frame = pipeline::beginClientFrame(**session, *in, *out);
        REQUIRE(frame.has_value());
        CHECK_FALSE(pipeline::enqueueClientPart(**session, *in, *out, *frame, (*session)->lanes().front()));
        end = pipeline::abandonClientFrame(**session, *in, *out, *frame);
        REQUIRE_MESSAGE(end.has_value(), (end ? "" : end.error().message));
        REQUIRE(end->has_value());
        REQUIRE((**end).wait() == CL_SUCCESS);
        CHECK(KhrExternalMemory::log == std::vector<Logged>{{"acquire", in->mem()},
                                                            {"acquire", out->mem()},
                                                            {"frame", nullptr},
                                                            {"release", in->mem()},
                                                            {"release", out->mem()}});
    } // the buffers and session go before the emulation's mappings
    REQUIRE(framecl_begin_cpu_access(out_fd.get(), FRAMECL_CPU_READ) == 0);
    CHECK(std::memcmp(out_bytes, pixels.data(), bytes) == 0);
    REQUIRE(framecl_end_cpu_access(out_fd.get(), FRAMECL_CPU_READ) == 0);
    munmap(in_bytes, bytes);
    munmap(out_bytes, bytes);
    for (const auto& [mapping, size] : KhrExternalMemory::mappings)
        munmap(mapping, size);
}
