#pragma once
// A V4L2 capture device as framecl-v4l2-capture uses it: one single-planar capture
// queue, a format framecl takes, and buffers that leave the device as dma-bufs — its own
// (MMAP, each exported once with VIDIOC_EXPBUF) or the caller's (DMABUF). Nothing here
// knows framecld.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <framecl/format.h>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::v4l2_capture {

enum class Io { Mmap, DmaBuf };

// A buffer the device filled: its index, the driver's frame counter and capture time.
struct Captured {
    uint32_t index;
    uint32_t sequence;
    uint64_t timestamp_ns; // CLOCK_MONOTONIC where the driver says so, else 0
    bool corrupted;        // the driver says the frame is damaged (V4L2_BUF_FLAG_ERROR)
};

class CaptureDevice {
public:
    // Opens `path`, checks it streams video capture, and sets `fourcc` (a framecl DRM
    // fourcc) at `width` x `height`; the driver may change the size, never the format.
    static Result<CaptureDevice> open(const std::string& path, uint32_t fourcc, uint32_t width, uint32_t height);

    CaptureDevice(CaptureDevice&&) noexcept = default;
    CaptureDevice& operator=(CaptureDevice&&) = delete;
    ~CaptureDevice(); // streams off

    // The frames' layout as the driver lays them out in a buffer, and a buffer's size.
    const framecl_frame_layout& layout() const { return layout_; }
    uint32_t bufferBytes() const { return buffer_bytes_; }
    const std::string& card() const { return card_; }

    // Mmap: `count` buffers of the device's, each exported; their dma-buf fds, the
    // caller's to keep. The driver may grant more or fewer.
    Result<std::vector<UniqueFd>> exportBuffers(uint32_t count);
    // DmaBuf: the caller's dma-bufs, at least bufferBytes() each, become the buffers.
    Result<void> importBuffers(const std::vector<int>& dmabufs);

    Result<void> queue(uint32_t index);
    Result<void> start();
    // A filled buffer, waiting up to timeout_ms; none when none came.
    Result<std::optional<Captured>> dequeue(int timeout_ms);
    int fd() const { return fd_.get(); }

private:
    CaptureDevice() = default;

    UniqueFd fd_;
    std::string card_;
    framecl_frame_layout layout_{};
    uint32_t buffer_bytes_ = 0;
    Io io_ = Io::Mmap;
    std::vector<int> dmabufs_; // DmaBuf: the caller's fds, by index
    bool streaming_ = false;
};

} // namespace framecl::v4l2_capture
