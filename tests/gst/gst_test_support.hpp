#pragma once
// GStreamer for the framecl element's tests: set up once per test process, pipelines
// from gst-launch descriptions stopped in exactly one place, and frames read out of
// appsinks as tightly packed planes, so that frames compare whatever strides their
// buffers had.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "temp_dir.hpp"

namespace framecl::test {

// gst_init with the registry in a directory of the test's own, not ~/.cache; the
// element is found through GST_PLUGIN_PATH_1_0 (tests/gst/meson.build).
inline void initGstreamer()
{
    static TempDir registry_dir;
    static const bool initialised = [] {
        setenv("GST_REGISTRY", (registry_dir / "registry.bin").c_str(), 1);
        gst_init(nullptr, nullptr);
        return true;
    }();
    REQUIRE(initialised);
    REQUIRE_MESSAGE(gst_element_factory_find("framecl"),
                    "the framecl element is not in GST_PLUGIN_PATH_1_0; run the tests through `meson test`");
}

// A GstMessage, unreffed in one place.
using Message = std::unique_ptr<GstMessage, void (*)(GstMessage*)>;

// "what it said (debug text)" of an error message.
inline std::string errorText(GstMessage* message)
{
    GError* error = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(message, &error, &debug);
    std::string text = std::string(error->message) + " (" + (debug ? debug : "") + ")";
    g_error_free(error);
    g_free(debug);
    return text;
}

class RunningPipeline {
public:
    // Parses `description` as gst-launch-1.0 does and sets it playing.
    explicit RunningPipeline(const std::string& description)
    {
        initGstreamer();
        GError* error = nullptr;
        pipeline_ = gst_parse_launch(description.c_str(), &error);
        REQUIRE_MESSAGE(error == nullptr, "gst_parse_launch: " << std::string(error ? error->message : ""));
        play();
    }
    ~RunningPipeline()
    {
        gst_element_set_state(pipeline_, GST_STATE_NULL);
        gst_object_unref(pipeline_);
    }
    RunningPipeline(const RunningPipeline&) = delete;
    RunningPipeline& operator=(const RunningPipeline&) = delete;

    void play()
    {
        REQUIRE_MESSAGE(gst_element_set_state(pipeline_, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE,
                        "the pipeline did not start: " << firstError());
    }
    // Down to NULL (the framecl element disconnects), its bus emptied, and playing again.
    void restart()
    {
        REQUIRE(gst_element_set_state(pipeline_, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
        GstBus* bus = gst_element_get_bus(pipeline_);
        gst_bus_set_flushing(bus, TRUE);
        gst_bus_set_flushing(bus, FALSE);
        gst_object_unref(bus);
        play();
    }

    // The element of that name; the pipeline keeps the reference.
    GstElement* element(const char* name) const
    {
        GstElement* element = gst_bin_get_by_name(GST_BIN(pipeline_), name);
        REQUIRE_MESSAGE(element, "no element " << name);
        gst_object_unref(element);
        return element;
    }
    GstAppSink* sink(const char* name = "sink") const { return GST_APP_SINK(element(name)); }

    // The next message of `types` within `timeout`; nothing if none came.
    std::optional<Message> waitFor(GstMessageType types, std::chrono::milliseconds timeout) const
    {
        GstBus* bus = gst_element_get_bus(pipeline_);
        GstMessage* message = gst_bus_timed_pop_filtered(bus, timeout.count() * GST_MSECOND, types);
        gst_object_unref(bus);
        if (!message)
            return std::nullopt;
        return Message(message, gst_message_unref);
    }

    // The first error on the bus, as text; "" if there is none.
    std::string firstError() const
    {
        auto error = waitFor(GST_MESSAGE_ERROR, std::chrono::milliseconds(0));
        return error ? errorText(error->get()) : "";
    }

private:
    GstElement* pipeline_ = nullptr;
};

// The planes of a sample's frame, rows without their padding, one plane after another.
inline std::vector<uint8_t> packedFrame(GstSample* sample)
{
    GstVideoInfo info;
    REQUIRE(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
    GstVideoFrame frame;
    REQUIRE(gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ));
    std::vector<uint8_t> bytes;
    for (guint plane = 0; plane < GST_VIDEO_FRAME_N_PLANES(&frame); ++plane) {
        const auto* data = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, plane));
        const size_t row = size_t(GST_VIDEO_FRAME_COMP_WIDTH(&frame, plane)) * GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, plane);
        for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&frame, plane); ++y) {
            const uint8_t* start = data + size_t(y) * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, plane);
            bytes.insert(bytes.end(), start, start + row);
        }
    }
    gst_video_frame_unmap(&frame);
    return bytes;
}

// A sample, unreffed in one place.
using Sample = std::unique_ptr<GstSample, void (*)(GstSample*)>;

// The next sample of `sink`; nothing at EOS. A stall (nothing within `timeout`) or an
// error fails the test with what the bus says.
inline std::optional<Sample> nextSample(const RunningPipeline& pipeline, const char* sink = "sink",
                                        std::chrono::seconds timeout = std::chrono::seconds(30))
{
    GstSample* sample = gst_app_sink_try_pull_sample(pipeline.sink(sink), timeout.count() * GST_SECOND);
    if (sample)
        return Sample(sample, gst_sample_unref);
    REQUIRE_MESSAGE(gst_app_sink_is_eos(pipeline.sink(sink)),
                    "no frame within " << timeout.count() << " s: " << pipeline.firstError());
    return std::nullopt;
}

// "WxH" and the format of a sample's caps, as "GRAY8 318x240".
inline std::string sampleFormat(GstSample* sample)
{
    GstVideoInfo info;
    REQUIRE(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
    return std::string(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info))) + " " +
           std::to_string(GST_VIDEO_INFO_WIDTH(&info)) + "x" + std::to_string(GST_VIDEO_INFO_HEIGHT(&info));
}

} // namespace framecl::test
