// Input frames in the kinds of memory the framecl element tells apart, pushed from an
// appsrc: system memory with rows longer than the frame's (a GstVideoMeta says so) and
// an unsealed memfd are copied into frames of the element's own pool; a sealed memfd
// is registered with framecld as it is. A real dma-buf (gst_is_dmabuf_memory) takes
// the sealed memfd's path; it needs an exporter that only the vm suite's guest has, and
// is tested there (tests/vm/gst_dmabuf_test.cpp). The memfd runs the same code: the
// registration of a GstFdMemory's fd, kept on the memory and released when it goes.
#include <random>

#include <doctest/doctest.h>
#include <framecl/client.h>
#include <gst/allocators/allocators.h>
#include <gst/app/gstappsrc.h>
#include <nlohmann/json.hpp>

#include "daemon_fixture.hpp"
#include "gst_test_support.hpp"
#include "memory_fds.hpp"

using namespace framecl::test;

namespace {

constexpr int frame_width = 64, frame_height = 48, frame_count = 6;
constexpr size_t frame_bytes = size_t(frame_width) * frame_height;
// A sealed memfd is this large, far more than its frame: framecld's count of the
// client's registered bytes tells whether the memfds themselves were registered.
constexpr size_t mebibyte = 1 << 20;

enum class InputMemory { PaddedSystemMemory, UnsealedMemfd, SealedMemfd };

std::vector<uint8_t> randomFrame(unsigned seed)
{
    std::mt19937 random(seed);
    std::vector<uint8_t> frame(frame_bytes);
    for (uint8_t& byte : frame)
        byte = uint8_t(random());
    return frame;
}

GstBuffer* fdBuffer(const framecl::UniqueFd& memfd, size_t size)
{
    GstAllocator* allocator = gst_fd_allocator_new();
    // The memory owns the duplicate and closes it when freed.
    GstMemory* memory = gst_fd_allocator_alloc(allocator, duplicate(memfd).release(), size, GST_FD_MEMORY_FLAG_NONE);
    gst_object_unref(allocator);
    GstBuffer* buffer = gst_buffer_new();
    gst_buffer_append_memory(buffer, memory);
    return buffer;
}

GstBuffer* inputBuffer(InputMemory kind, const std::vector<uint8_t>& frame)
{
    switch (kind) {
    case InputMemory::PaddedSystemMemory: {
        constexpr int stride = frame_width + 16;
        GstBuffer* buffer = gst_buffer_new_allocate(nullptr, size_t(stride) * frame_height, nullptr);
        GstMapInfo map;
        REQUIRE(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
        std::fill(map.data, map.data + map.size, 0xee);
        for (int y = 0; y < frame_height; ++y)
            std::copy_n(frame.begin() + size_t(y) * frame_width, frame_width, map.data + size_t(y) * stride);
        gst_buffer_unmap(buffer, &map);
        gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
        gint strides[GST_VIDEO_MAX_PLANES] = {stride};
        gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_GRAY8, frame_width,
                                       frame_height, 1, offsets, strides);
        return buffer;
    }
    case InputMemory::UnsealedMemfd: {
        const auto memfd = namedMemfd("gst-input-unsealed", frame_bytes, 0);
        REQUIRE(pwrite(memfd.get(), frame.data(), frame.size(), 0) == ssize_t(frame.size()));
        return fdBuffer(memfd, frame_bytes);
    }
    case InputMemory::SealedMemfd: {
        const auto memfd = sealedMemfd("gst-input-sealed", mebibyte);
        REQUIRE(pwrite(memfd.get(), frame.data(), frame.size(), 0) == ssize_t(frame.size()));
        return fdBuffer(memfd, mebibyte);
    }
    }
    return nullptr;
}

// The bytes of the buffers framecld holds for the element's client (named
// "gst-framecl" at Hello), from its stats.
size_t elementClientBytes(const RunningDaemon& daemon)
{
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), "gst-test-stats", 5000};
    framecl_client* client = nullptr;
    REQUIRE_MESSAGE(framecl_connect(&options, &client) == 0, framecl_last_error(nullptr));
    char* json = nullptr;
    const int asked = framecl_stats(client, &json);
    framecl_disconnect(client);
    REQUIRE(asked == 0);
    const auto stats = nlohmann::json::parse(json);
    free(json);
    for (const auto& entry : stats["clients"])
        if (entry["name"] == "gst-framecl")
            return entry["bytes"].get<size_t>();
    FAIL("framecld has no client gst-framecl: " << stats.dump());
    return 0;
}

// Pushes frame_count frames in `kind` of memory through the copy pipeline, checks each
// output, and returns what framecld holds for the element while the inputs still live.
size_t pushFrames(const RunningDaemon& daemon, InputMemory kind)
{
    RunningPipeline pipeline("appsrc name=src format=time caps=video/x-raw,format=GRAY8,width=" +
                             std::to_string(frame_width) + ",height=" + std::to_string(frame_height) +
                             ",framerate=30/1 ! framecl pipeline=copy socket=" + daemon.socket().string() +
                             " ! appsink name=sink sync=false");
    GstAppSrc* source = GST_APP_SRC(pipeline.element("src"));
    std::vector<std::vector<uint8_t>> frames;
    // Held until framecld's holdings are counted: a freed memory releases its buffer.
    std::vector<GstBuffer*> inputs;
    for (int i = 0; i < frame_count; ++i) {
        frames.push_back(randomFrame(unsigned(i)));
        GstBuffer* buffer = inputBuffer(kind, frames.back());
        GST_BUFFER_PTS(buffer) = i * GST_SECOND / 30;
        inputs.push_back(gst_buffer_ref(buffer));
        REQUIRE(gst_app_src_push_buffer(source, buffer) == GST_FLOW_OK);
    }
    REQUIRE(gst_app_src_end_of_stream(source) == GST_FLOW_OK);
    for (int i = 0; i < frame_count; ++i) {
        auto output = nextSample(pipeline);
        REQUIRE_MESSAGE(output, "framecl ended after " << i << " frames");
        CHECK(sampleFormat(output->get()) == "GRAY8 64x48");
        CHECK_MESSAGE(packedFrame(output->get()) == frames[i], "frame " << i << " differs");
    }
    CHECK_FALSE(nextSample(pipeline));
    const size_t held = elementClientBytes(daemon);
    for (GstBuffer* input : inputs)
        gst_buffer_unref(input);
    if (kind == InputMemory::SealedMemfd)
        CHECK_MESSAGE(elementClientBytes(daemon) < mebibyte, "the freed input memfds are still registered");
    return held;
}

} // namespace

TEST_CASE("input memory: copied from system memory and unsealed memfds, shared as it is from sealed memfds")
{
    RunningDaemon daemon;
    SUBCASE("system memory with padded rows, described by a GstVideoMeta, is copied")
    {
        CHECK(pushFrames(daemon, InputMemory::PaddedSystemMemory) < mebibyte);
    }
    SUBCASE("an unsealed memfd, which framecld would refuse, is copied")
    {
        CHECK(pushFrames(daemon, InputMemory::UnsealedMemfd) < mebibyte);
    }
    SUBCASE("a sealed memfd is registered with framecld as it is, once per memory")
    {
        const size_t held = pushFrames(daemon, InputMemory::SealedMemfd);
        CHECK(held >= frame_count * mebibyte);
        CHECK(held < (frame_count + 1) * mebibyte);
    }
}
