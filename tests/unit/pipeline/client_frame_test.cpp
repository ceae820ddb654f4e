// Frames between imported client buffers, as the daemon enqueues them
// (pipeline::enqueueClientFrame), on PoCL as it is (unified memory: host-ptr, no
// copies) and on PoCL reported as a device with memory of its own (host-copy): there
// the frame is right only if the input is copied to the device before the dispatches
// and the output back to the client's memfd after them.
#include <algorithm>
#include <cstring>
#include <random>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "memory/imported_buffer.hpp"
#include "memory_fds.hpp"
#include "pipeline/client_frame.hpp"
#include "pipeline_test_support.hpp"
#include "shared_programs.hpp"

using namespace framecl;
using memory::ImportPath;

namespace {

constexpr uint8_t poison = 0xA5;

// The device framecld would choose — PoCL here — with its own capabilities, or told it
// has no unified memory, as an NVIDIA GPU reports. On such a GPU (docs/testing.md has
// the H100's run) only the cases without unified memory apply.
std::unique_ptr<gpu::GpuContext> openPocl(bool unified_memory)
{
    const auto candidates = gpu::enumerateDevices();
    const auto chosen = gpu::chooseDevice(candidates, "auto");
    REQUIRE(chosen.has_value());
    gpu::Capabilities caps = gpu::readCapabilities(candidates[*chosen].device);
    if (unified_memory)
        REQUIRE(caps.unified_memory); // PoCL on a CPU: what host-copy is compared with
    caps.unified_memory = unified_memory;
    auto gpu = gpu::openGpu(candidates[*chosen], caps, gpu::VendorEntryPoints{}, config::GpuConfig{});
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

// A client's buffer: a sealed memfd it keeps mapped, and the daemon's import of it.
struct ClientBuffer {
    UniqueFd fd;
    std::unique_ptr<test::SharedMapping> client;
    std::shared_ptr<memory::ImportedBuffer> imported;

    ClientBuffer(const gpu::GpuContext& gpu, const framecl_frame_layout& layout, size_t size, uint8_t fill)
        : fd(test::sealedMemfd("client-frame", off_t(size)))
    {
        client = std::make_unique<test::SharedMapping>(fd.get(), size);
        std::memset(client->bytes(), fill, size);
        auto buffer = memory::importBuffer(gpu, test::duplicate(fd), layout, UINT64_MAX);
        REQUIRE_MESSAGE(buffer.has_value(), (buffer ? "" : buffer.error().message));
        imported = *buffer;
    }
    uint8_t* bytes() const { return static_cast<uint8_t*>(client->bytes()); }
};

// NV12 at 64x48 with each row padded and the chroma plane placed after a gap: the
// copies must move the planes where the layout puts them.
framecl_frame_layout paddedNv12(size_t* size)
{
    framecl_frame_layout layout{DRM_FORMAT_NV12, 64, 48, 2, {}};
    layout.planes[0] = {128, 80};
    layout.planes[1] = {128 + 80 * 48 + 256, 96};
    *size = layout.planes[1].offset + 96 * 24 + 512;
    return layout;
}

// NV12 at 64x48 with rows as long as their stride and the chroma plane right after the
// luma, both after a gap at the start and before the buffer's tail: the planes leave no
// gap between them, so host-copy moves them as one span.
framecl_frame_layout gaplessNv12(size_t* size)
{
    framecl_frame_layout layout{DRM_FORMAT_NV12, 64, 48, 2, {}};
    layout.planes[0] = {192, 64};
    layout.planes[1] = {192 + 64 * 48, 64};
    *size = layout.planes[1].offset + 64 * 24 + 320;
    return layout;
}

// The bytes of an NV12 64x48 frame's rows, over both planes.
constexpr size_t row_bytes = 64 * 48 + 64 * 24;

// The bytes of `bytes` outside the rows of `layout`'s planes (NV12 64x48), in order.
std::vector<uint8_t> bytesOutsideRows(const uint8_t* bytes, size_t size, const framecl_frame_layout& layout)
{
    std::vector<bool> in_row(size, false);
    for (uint32_t y = 0; y < 48; ++y)
        std::fill_n(in_row.begin() + layout.planes[0].offset + y * layout.planes[0].stride, 64, true);
    for (uint32_t y = 0; y < 24; ++y)
        std::fill_n(in_row.begin() + layout.planes[1].offset + y * layout.planes[1].stride, 64, true);
    std::vector<uint8_t> outside;
    for (size_t i = 0; i < size; ++i)
        if (!in_row[i])
            outside.push_back(bytes[i]);
    return outside;
}

// Runs two frames of `copy` from a random input to a poisoned output and checks that
// every byte of every plane row arrived, and that the bytes around the rows (the
// stride's padding, the gaps before and between the planes, the buffer's tail) are
// left as the client wrote them.
void checkCopyFrame(bool unified_memory, ImportPath expected_path, framecl_frame_layout (*makeLayout)(size_t*))
{
    auto gpu = openPocl(unified_memory);
    gpu::ProgramCache cache(test::sharedProgramsDir());
    auto set = test::pipelineSet(test::pipelineConfig("[[pipeline]]\nname = \"one-copy\"\nstages = [ { plugin = \"copy\" } ]\n"), *gpu, cache);
    size_t size = 0;
    const framecl_frame_layout layout = makeLayout(&size);
    auto session = pipeline::Session::open(*gpu, set.catalog.find("one-copy"), {DRM_FORMAT_NV12, 64, 48}, {});
    REQUIRE_MESSAGE(session.has_value(), (session ? "" : session.error().message));

    ClientBuffer in(*gpu, layout, size, 0), out(*gpu, layout, size, poison);
    CHECK(in.imported->path() == expected_path);
    std::mt19937 random(7);
    for (size_t i = 0; i < size; ++i)
        in.bytes()[i] = uint8_t(random());

    for (int frame = 0; frame < 2; ++frame) { // the second frame replays what the first recorded
        if (frame == 1)
            for (size_t i = 0; i < size; ++i)
                in.bytes()[i] ^= 0x5A; // new content: the copy must be taken per frame
        auto enqueued = pipeline::enqueueClientFrame(**session, *in.imported, *out.imported);
        REQUIRE_MESSAGE(enqueued.has_value(), (enqueued ? "" : enqueued.error().message));
        REQUIRE(enqueued->done.wait() == CL_SUCCESS);
        size_t wrong = 0;
        for (uint32_t y = 0; y < 48; ++y)
            wrong += std::memcmp(in.bytes() + layout.planes[0].offset + y * layout.planes[0].stride,
                                 out.bytes() + layout.planes[0].offset + y * layout.planes[0].stride, 64) != 0;
        for (uint32_t y = 0; y < 24; ++y)
            wrong += std::memcmp(in.bytes() + layout.planes[1].offset + y * layout.planes[1].stride,
                                 out.bytes() + layout.planes[1].offset + y * layout.planes[1].stride, 64) != 0;
        INFO("frame " << frame);
        CHECK(wrong == 0);
        // Every byte outside the rows is the client's, and comes back as it was.
        CHECK(bytesOutsideRows(out.bytes(), size, layout) == std::vector<uint8_t>(size - row_bytes, poison));
    }
}

} // namespace

TEST_CASE("on a device with unified memory a frame works in the client's memory, with no copy")
{
    checkCopyFrame(true, ImportPath::HostPtr, paddedNv12);
}

TEST_CASE("on a device without unified memory a frame's input is copied in and its output out")
{
    SUBCASE("padded rows, a gap between the planes: a rectangle per plane")
    {
        checkCopyFrame(false, ImportPath::HostCopy, paddedNv12);
    }
    SUBCASE("planes without a gap: one span")
    {
        checkCopyFrame(false, ImportPath::HostCopy, gaplessNv12);
    }
}

TEST_CASE("host-copy moves the layout's span and nothing on host-ptr")
{
    size_t size = 0;
    const framecl_frame_layout layout = paddedNv12(&size);
    for (const bool unified : {true, false}) {
        auto gpu = openPocl(unified);
        ClientBuffer buffer(*gpu, layout, size, 1);
        auto up = buffer.imported->enqueueUpload(gpu->queue());
        auto down = buffer.imported->enqueueDownload(gpu->queue());
        REQUIRE(up.has_value());
        REQUIRE(down.has_value());
        CHECK(up->has_value() == !unified);
        CHECK(down->has_value() == !unified);
        REQUIRE(clFinish(gpu->queue()()) == CL_SUCCESS);
        size_t device_bytes = 0;
        REQUIRE(clGetMemObjectInfo(buffer.imported->mem(), CL_MEM_SIZE, sizeof device_bytes, &device_bytes,
                                   nullptr) == CL_SUCCESS);
        // host-ptr covers the whole memfd; host-copy's device buffer the layout only.
        CHECK(device_bytes == (unified ? size : framecl_layout_end(&layout)));
    }
}

TEST_CASE("a frame's parts alternate between the lanes and wait for exactly what they read")
{
    // Tiles of one dispatch are independent; a tile of a later dispatch reads them all;
    // everything reads the buffers' acquire and upload (first_dispatch -1). Parts P0..P3
    // alternate between lanes 0 and 1, two tiles of dispatch 0 and then two of dispatch 1.
    auto gpu = openPocl(true);
    std::vector<cl::UserEvent> runs;
    for (int i = 0; i < 5; ++i)
        runs.emplace_back(gpu->context());
    pipeline::EnqueuedFrame frame;
    frame.noteLaneWork(0, runs[0], -1); // the upload
    CHECK(frame.dependencies(1, 0).size() == 1);
    CHECK(frame.dependencies(1, 0)[0]() == runs[0]());
    frame.noteLaneWork(0, runs[1], 0); // P0
    // P1, dispatch 0 on lane 1: the upload, not P0.
    REQUIRE(frame.dependencies(1, 0).size() == 1);
    CHECK(frame.dependencies(1, 0)[0]() == runs[0]());
    frame.noteLaneWork(1, runs[2], 0); // P1
    // P2, dispatch 1 on lane 0: P1 on lane 1 (P0 is before it on lane 0).
    REQUIRE(frame.dependencies(0, 1).size() == 1);
    CHECK(frame.dependencies(0, 1)[0]() == runs[2]());
    frame.noteLaneWork(0, runs[3], 1); // P2
    // P3, dispatch 1 on lane 1: P0 of dispatch 0 on lane 0, though P2 of its own
    // dispatch came after it there.
    REQUIRE(frame.dependencies(1, 1).size() == 1);
    CHECK(frame.dependencies(1, 1)[0]() == runs[1]());
    frame.noteLaneWork(1, runs[4], 1); // P3
    CHECK(frame.last_lane == 1);
    // The frame's end, on lane 1: P2, the last on lane 0.
    REQUIRE(frame.otherLanes(1).size() == 1);
    CHECK(frame.otherLanes(1)[0]() == runs[3]());
    for (cl::UserEvent& run : runs)
        run.setStatus(CL_COMPLETE);
}

TEST_CASE("a tiled chain whose parts alternate between lanes gives the bytes of one untiled dispatch per stage")
{
    // Host-copy, so that the first parts wait for the upload and the end for every
    // lane; four stages of tiles, so that parts wait for the stage before; frames
    // enqueued back to back, so that each waits for the last one's use of the
    // intermediates. Each output is compared with the same session's pipeline run
    // untiled on lane 0.
    auto gpu = openPocl(false);
    REQUIRE(gpu->lanes() == 2);
    gpu::ProgramCache cache(test::sharedProgramsDir());
    auto set = test::pipelineSet(test::pipelineConfig(R"(
[[pipeline]]
name = "chain"
stages = [ { plugin = "color", op = "abgr_to_y" }, { plugin = "box", width = 3, height = 5, variant = "separable" },
           { plugin = "sobel", output = "magnitude" }, { plugin = "copy" } ]
)"),
                                 *gpu, cache);
    constexpr uint32_t width = 97, height = 61;
    const framecl_format format{DRM_FORMAT_ABGR8888, width, height};
    pipeline::SessionOptions tiled_options;
    tiled_options.recording = gpu::RecordingMode::Off;
    tiled_options.kernel_budget_ns = 1'000'000;
    tiled_options.assumed_ns_per_item = 4 * pipeline::tileTarget(tiled_options.kernel_budget_ns) / (width * height);
    auto tiled = pipeline::Session::open(*gpu, set.catalog.find("chain"), format, tiled_options);
    REQUIRE_MESSAGE(tiled.has_value(), (tiled ? "" : tiled.error().message));
    pipeline::SessionOptions whole_options;
    whole_options.recording = gpu::RecordingMode::Off;
    auto whole = pipeline::Session::open(*gpu, set.catalog.find("chain"), format, whole_options);
    REQUIRE_MESSAGE(whole.has_value(), (whole ? "" : whole.error().message));
    CHECK((*tiled)->lanes() == std::vector<uint32_t>{0, 1});

    framecl_frame_layout in_layout{}, out_layout{};
    const size_t in_size = framecl_packed_layout(DRM_FORMAT_ABGR8888, width, height, &in_layout);
    const size_t out_size = framecl_packed_layout((*tiled)->output().fourcc, width, height, &out_layout);
    constexpr int frames = 3;
    std::vector<std::unique_ptr<ClientBuffer>> ins, outs, references;
    std::mt19937 random(11);
    for (int i = 0; i < frames; ++i) {
        ins.push_back(std::make_unique<ClientBuffer>(*gpu, in_layout, in_size, 0));
        for (size_t b = 0; b < in_size; ++b)
            ins.back()->bytes()[b] = uint8_t(random());
        outs.push_back(std::make_unique<ClientBuffer>(*gpu, out_layout, out_size, poison));
        references.push_back(std::make_unique<ClientBuffer>(*gpu, out_layout, out_size, poison));
    }
    std::vector<pipeline::ClientFrame> enqueued;
    for (int i = 0; i < frames; ++i) {
        auto frame = pipeline::enqueueClientFrame(**tiled, *ins[i]->imported, *outs[i]->imported);
        REQUIRE_MESSAGE(frame.has_value(), (frame ? "" : frame.error().message));
        CHECK(frame->frame.parts() >= 8);
        CHECK(frame->frame.lane_work.size() == 2);
        enqueued.push_back(std::move(*frame));
    }
    for (pipeline::ClientFrame& frame : enqueued)
        REQUIRE(frame.done.wait() == CL_SUCCESS);
    for (int i = 0; i < frames; ++i) {
        auto frame = pipeline::enqueueClientFrame(**whole, *ins[i]->imported, *references[i]->imported);
        REQUIRE_MESSAGE(frame.has_value(), (frame ? "" : frame.error().message));
        REQUIRE(frame->done.wait() == CL_SUCCESS);
        INFO("frame " << i);
        CHECK(std::memcmp(outs[i]->bytes(), references[i]->bytes(), out_size) == 0);
    }
}
