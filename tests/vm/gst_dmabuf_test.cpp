// The framecl GStreamer element (gst/) fed real dma-bufs, in the guest: RGBA frames in
// vgem buffers, wrapped as GstDmaBufMemory and pushed from an appsrc as a camera source
// hands them out (qtiqmmfsrc), and vivid's NV12 frames from v4l2src io-mode=dmabuf. The
// element must register each buffer's own fd with framecld once and reuse it, copying
// nothing; every output equal to the CPU reference.
#include <cstring>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <gst/allocators/allocators.h>
#include <gst/app/gstappsrc.h>
#include <nlohmann/json.hpp>

#include "daemon_client.hpp"
#include "gst_test_support.hpp"
#include "guest_daemon.hpp"
#include "reference_color.hpp"

using namespace framecl::test;
using namespace framecl::reference;
using framecl::UniqueFd;

namespace {

constexpr int width = 75, height = 41; // no multiple of any work-group size
constexpr int stride = width * 4 + 128; // rows padded, as a camera's often are
constexpr size_t frame_bytes = size_t(stride) * height;

// One input frame: a vgem dma-buf that the test writes through its own mapping, and
// the GstBuffer around it (one GstDmaBufMemory, a GstVideoMeta for the padded rows),
// pushed again for each frame it carries.
class DmaBufInput {
public:
    DmaBufInput() : fd_(vgemBuffer(frame_bytes))
    {
        void* mapping = mmap(nullptr, frame_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
        REQUIRE(mapping != MAP_FAILED);
        bytes_ = static_cast<uint8_t*>(mapping);
        GstAllocator* allocator = gst_dmabuf_allocator_new();
        // The memory owns the duplicate and closes it when freed.
        GstMemory* memory = gst_dmabuf_allocator_alloc(allocator, dup(fd_.get()), frame_bytes);
        gst_object_unref(allocator);
        REQUIRE(gst_is_dmabuf_memory(memory));
        buffer_ = gst_buffer_new();
        gst_buffer_append_memory(buffer_, memory);
        gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
        gint strides[GST_VIDEO_MAX_PLANES] = {stride};
        gst_buffer_add_video_meta_full(buffer_, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_RGBA, width, height, 1,
                                       offsets, strides);
    }
    ~DmaBufInput()
    {
        gst_buffer_unref(buffer_);
        munmap(bytes_, frame_bytes);
    }
    DmaBufInput(const DmaBufInput&) = delete;
    DmaBufInput& operator=(const DmaBufInput&) = delete;

    // The frame's rows written from `pixels` (packed RGBA), as a camera's CPU would.
    void write(const std::vector<uint8_t>& pixels)
    {
        REQUIRE(framecl_begin_cpu_access(fd_.get(), FRAMECL_CPU_WRITE) == 0);
        for (int y = 0; y < height; ++y)
            std::memcpy(bytes_ + size_t(y) * stride, &pixels[size_t(y) * width * 4], size_t(width) * 4);
        REQUIRE(framecl_end_cpu_access(fd_.get(), FRAMECL_CPU_WRITE) == 0);
    }

    // A reference for gst_app_src_push_buffer() to take.
    GstBuffer* push() const { return gst_buffer_ref(buffer_); }

private:
    UniqueFd fd_;
    uint8_t* bytes_ = nullptr;
    GstBuffer* buffer_ = nullptr;
};

// framecld's stats of the element's client (it says Hello as "gst-framecl").
nlohmann::json elementStats(const RunningDaemon& daemon)
{
    Client client = connectTo(daemon, "gst-test-stats", guest_request_timeout_ms);
    const nlohmann::json all = stats(client);
    for (const auto& entry : all["clients"])
        if (entry["name"] == "gst-framecl")
            return entry;
    FAIL("framecld has no client gst-framecl: " << all.dump() << "\nframecld said:\n" << daemon.log());
    return {};
}

} // namespace

TEST_CASE("GStreamer: RGBA frames in vgem dma-bufs reach framecld as they are, each buffer registered once")
{
    const RunningDaemon& daemon = guestDaemon();
    RunningPipeline pipeline("appsrc name=src format=time caps=video/x-raw,format=RGBA,width=" + std::to_string(width) +
                             ",height=" + std::to_string(height) + ",framerate=30/1 ! framecl pipeline=luma socket=" +
                             daemon.socket().string() + " timeout-ms=" + std::to_string(guest_request_timeout_ms) +
                             " ! appsink name=sink sync=false");
    GstAppSrc* source = GST_APP_SRC(pipeline.element("src"));
    DmaBufInput inputs[2];
    std::mt19937 random(3);
    constexpr int frames = 6;
    for (int i = 0; i < frames; ++i) {
        CAPTURE(i);
        std::vector<uint8_t> pixels(size_t(width) * height * 4);
        for (uint8_t& byte : pixels)
            byte = uint8_t(random());
        // The buffer written for frame i last carried frame i - 2, whose output is back:
        // the element has done with it.
        DmaBufInput& input = inputs[i % 2];
        input.write(pixels);
        GstBuffer* buffer = input.push();
        GST_BUFFER_PTS(buffer) = i * GST_SECOND / 30;
        REQUIRE(gst_app_src_push_buffer(source, buffer) == GST_FLOW_OK);
        auto output = nextSample(pipeline, "sink", guest_wait);
        REQUIRE_MESSAGE(output, "framecl ended after " << i << " frames");
        CHECK(sampleFormat(output->get()) == "GRAY8 75x41");
        CHECK(packedFrame(output->get()) == lumaPlane(pixels));
    }

    const nlohmann::json stats = elementStats(daemon);
    INFO(stats.dump());
    // The two dma-bufs themselves, each once (the element's outputs are memfds: the
    // guest's kernel, Debian's, has no DMA-BUF heap).
    CHECK(stats["buffer_kinds"]["dma-buf"] == 2);
    // Each frame read its dma-buf input, bracketed by DMA_BUF_IOCTL_SYNC START and END:
    // no frame went through a copy.
    CHECK(stats["dma_buf_syncs"] == 2 * frames);
    REQUIRE(gst_app_src_end_of_stream(source) == GST_FLOW_OK);
    CHECK_FALSE(nextSample(pipeline));
}

TEST_CASE("GStreamer: v4l2src io-mode=dmabuf from vivid through framecl, each output against the CPU reference")
{
    const RunningDaemon& daemon = guestDaemon();
    constexpr int w = 320, h = 180, frames = 6;
    // The tee's second branch keeps each capture for the reference: a sample holds its
    // buffer, so vivid cannot refill it before the test has read it.
    RunningPipeline pipeline("v4l2src device=" + vividCaptureNode() + " io-mode=dmabuf num-buffers=" +
                             std::to_string(frames) + " ! video/x-raw,format=NV12,width=" + std::to_string(w) +
                             ",height=" + std::to_string(h) + " ! tee name=t ! queue ! framecl pipeline=rgb socket=" +
                             daemon.socket().string() + " timeout-ms=" + std::to_string(guest_request_timeout_ms) +
                             " ! appsink name=sink sync=false t. ! queue ! appsink name=capture sync=false");
    for (int i = 0; i < frames; ++i) {
        CAPTURE(i);
        // The first frame opens the session: PoCL compiles its kernels on the guest's
        // emulated CPU, on a loaded machine.
        auto output = nextSample(pipeline, "sink", guest_wait);
        REQUIRE_MESSAGE(output, "framecl ended after " << i << " frames");
        auto captured = nextSample(pipeline, "capture", guest_wait);
        REQUIRE(captured);
        CHECK(GST_BUFFER_PTS(gst_sample_get_buffer(output->get())) ==
              GST_BUFFER_PTS(gst_sample_get_buffer(captured->get())));
        CHECK(sampleFormat(output->get()) == "RGBA 320x180");
        const auto nv12 = packedFrame(captured->get());
        REQUIRE(nv12.size() == size_t(w) * h * 3 / 2);
        const std::vector<uint8_t> luma(nv12.begin(), nv12.begin() + ptrdiff_t(w) * h);
        const std::vector<uint8_t> chroma(nv12.begin() + ptrdiff_t(w) * h, nv12.end());
        CHECK(packedFrame(output->get()) == nv12ToAbgr(luma, chroma, w, h, YuvMatrix::Bt601, YuvRange::Limited));
    }
    // vivid's own buffers reached framecld as dma-bufs: no copy.
    const nlohmann::json stats = elementStats(daemon);
    INFO(stats.dump());
    CHECK(stats["buffer_kinds"]["dma-buf"].get<int>() >= 1);
    CHECK(stats["dma_buf_syncs"] == 2 * frames);
    CHECK_FALSE(nextSample(pipeline));
}
