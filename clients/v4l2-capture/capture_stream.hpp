#pragma once
// Streams a V4L2 capture device's frames through a framecld pipeline: each dequeued
// buffer is submitted as it is (no pixel copied), and goes back to the device only when
// its frame's Done says framecld has finished reading it.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <framecl/client.hpp>

#include "base/result.hpp"
#include "capture_device.hpp"

namespace framecl::v4l2_capture {

enum class OutputFiles { None, Png, Raw };

struct StreamSettings {
    std::string device;   // /dev/videoN
    std::string pipeline;
    uint32_t fourcc = 0;  // framecl's (DRM) fourcc
    uint32_t width = 0;
    uint32_t height = 0;
    Io io = Io::Mmap;
    uint32_t buffers = 4; // capture buffers, and as many outputs: frames in flight at most
    uint32_t frames = 0;
    framecl_allocate_options allocate{FRAMECL_BUFFERS_AUTO, nullptr}; // outputs, and DMABUF's captures
    bool verify = false;  // copy: each output equals its capture, read through the dma-buf
    OutputFiles output_files = OutputFiles::None;
    bool save_captures = false; // each capture too, raw, as framecld read it
    std::filesystem::path output_dir;
    int timeout_ms = 5000;
};

struct StreamReport {
    std::string card;
    framecl_frame_layout input{};
    framecl_frame_layout output{};
    framecl_buffer_source output_buffers = FRAMECL_BUFFERS_AUTO;
    uint64_t frames = 0, ok = 0, failed = 0, dropped = 0, busy = 0, lost = 0;
    uint64_t corrupted = 0;  // captures the driver marked damaged: queued again, not sent
    uint64_t skipped = 0;    // frames the driver's counter skipped (it had no free buffer)
    uint64_t mismatches = 0; // --verify
    std::vector<double> latency_ms;         // submit to Done
    std::vector<double> capture_latency_ms; // capture time to Done, where the driver stamps it
    double first_submit_s = 0, last_done_s = 0;
    // Where the pipeline makes statistics: how many frames brought them, and the last's.
    uint64_t with_statistics = 0;
    std::optional<framecl_statistics> last_statistics;
    std::string error; // what stopped the stream early, if anything
};

Result<StreamReport> streamCapture(Client& client, const StreamSettings& settings);

} // namespace framecl::v4l2_capture
