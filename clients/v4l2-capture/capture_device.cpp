#include "capture_device.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>

#include <drm_fourcc.h>
#include <fmt/format.h>
#include <linux/videodev2.h>

namespace framecl::v4l2_capture {
namespace {

// ioctl, retried where a signal interrupted it.
int xioctl(int fd, unsigned long request, void* argument)
{
    int result = 0;
    do
        result = ioctl(fd, request, argument);
    while (result < 0 && errno == EINTR);
    return result;
}

Result<void> failed(const char* call, const std::string& what)
{
    return fail(fmt::format("{} ({}): {}", call, what, std::strerror(errno)));
}

// V4L2 names framecl's DRM formats by fourccs of its own, the same bytes in memory; the
// Bayer formats framecl names by V4L2's fourccs already.
std::optional<uint32_t> v4l2Format(uint32_t fourcc)
{
    switch (fourcc) {
    case DRM_FORMAT_NV12:
        return V4L2_PIX_FMT_NV12; // Y plane, then interleaved U, V at half size
    case DRM_FORMAT_R8:
        return V4L2_PIX_FMT_GREY;
    case DRM_FORMAT_ABGR8888:
        return V4L2_PIX_FMT_RGBA32; // bytes R, G, B, A
    case DRM_FORMAT_R16:
    case DRM_FORMAT_ABGR16161616:
        return std::nullopt;
    default: // the Bayer formats, the only others framecl_format_name knows
        return framecl_format_name(fourcc) ? std::optional<uint32_t>(fourcc) : std::nullopt;
    }
}

} // namespace

Result<CaptureDevice> CaptureDevice::open(const std::string& path, uint32_t fourcc, uint32_t width, uint32_t height)
{
    CaptureDevice device;
    device.fd_.reset(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (!device.fd_.valid())
        return tl::unexpected(failed("open", path).error());
    const int fd = device.fd_.get();

    v4l2_capability capability{};
    if (xioctl(fd, VIDIOC_QUERYCAP, &capability) < 0)
        return tl::unexpected(failed("VIDIOC_QUERYCAP", path).error());
    const uint32_t caps =
        capability.capabilities & V4L2_CAP_DEVICE_CAPS ? capability.device_caps : capability.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING))
        return fail(fmt::format("{} ({}) is not a single-planar video capture device that streams", path,
                                reinterpret_cast<const char*>(capability.card)));
    device.card_ = reinterpret_cast<const char*>(capability.card);

    const auto pixelformat = v4l2Format(fourcc);
    if (!pixelformat)
        return fail(fmt::format("{} has no V4L2 counterpart here (nv12, r8, abgr8888 and the Bayer formats do)",
                                framecl_format_name(fourcc)));
    v4l2_format format{};
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    format.fmt.pix.width = width;
    format.fmt.pix.height = height;
    format.fmt.pix.pixelformat = *pixelformat;
    format.fmt.pix.field = V4L2_FIELD_NONE;
    if (xioctl(fd, VIDIOC_S_FMT, &format) < 0)
        return tl::unexpected(failed("VIDIOC_S_FMT", fmt::format("{} {}x{}", framecl_format_name(fourcc), width,
                                                                 height)).error());
    const v4l2_pix_format& set = format.fmt.pix;
    if (set.pixelformat != *pixelformat)
        return fail(fmt::format("{} does not capture {}", path, framecl_format_name(fourcc)));
    if (set.field != V4L2_FIELD_NONE)
        return fail(fmt::format("{} captures {} only as interlaced fields", path, framecl_format_name(fourcc)));

    // One buffer holds the whole frame; NV12's chroma rows follow the luma's, at the
    // same stride.
    framecl_frame_layout& layout = device.layout_;
    layout.fourcc = fourcc;
    layout.width = set.width;
    layout.height = set.height;
    layout.num_planes = fourcc == DRM_FORMAT_NV12 ? 2 : 1;
    layout.planes[0] = {0, set.bytesperline};
    if (fourcc == DRM_FORMAT_NV12)
        layout.planes[1] = {set.bytesperline * set.height, set.bytesperline};
    if (const char* problem = framecl_layout_problem(&layout))
        return fail(fmt::format("{}'s {} {}x{} frames: {}", path, framecl_format_name(fourcc), set.width,
                                set.height, problem));
    if (framecl_layout_end(&layout) > set.sizeimage)
        return fail(fmt::format("{} says its buffers hold {} bytes, less than a {} {}x{} frame", path, set.sizeimage,
                                framecl_format_name(fourcc), set.width, set.height));
    device.buffer_bytes_ = set.sizeimage;
    return device;
}

CaptureDevice::~CaptureDevice()
{
    if (fd_.valid() && streaming_) {
        v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        xioctl(fd_.get(), VIDIOC_STREAMOFF, &type);
    }
}

Result<std::vector<UniqueFd>> CaptureDevice::exportBuffers(uint32_t count)
{
    io_ = Io::Mmap;
    v4l2_requestbuffers request{};
    request.count = count;
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request.memory = V4L2_MEMORY_MMAP;
    if (xioctl(fd_.get(), VIDIOC_REQBUFS, &request) < 0)
        return tl::unexpected(failed("VIDIOC_REQBUFS", fmt::format("{} MMAP buffers", count)).error());
    std::vector<UniqueFd> exported;
    for (uint32_t index = 0; index < request.count; ++index) {
        v4l2_exportbuffer expbuf{};
        expbuf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        expbuf.index = index;
        expbuf.flags = O_RDWR | O_CLOEXEC; // framecld maps it; --verify reads it here
        if (xioctl(fd_.get(), VIDIOC_EXPBUF, &expbuf) < 0)
            return tl::unexpected(failed("VIDIOC_EXPBUF", fmt::format("buffer {}", index)).error());
        exported.emplace_back(expbuf.fd);
    }
    return exported;
}

Result<void> CaptureDevice::importBuffers(const std::vector<int>& dmabufs)
{
    io_ = Io::DmaBuf;
    v4l2_requestbuffers request{};
    request.count = uint32_t(dmabufs.size());
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request.memory = V4L2_MEMORY_DMABUF;
    if (xioctl(fd_.get(), VIDIOC_REQBUFS, &request) < 0)
        return failed("VIDIOC_REQBUFS", fmt::format("{} DMABUF buffers", dmabufs.size()));
    if (request.count != dmabufs.size())
        return fail(fmt::format("the driver takes {} DMABUF buffers, not {}", request.count, dmabufs.size()));
    dmabufs_ = dmabufs;
    return {};
}

Result<void> CaptureDevice::queue(uint32_t index)
{
    v4l2_buffer buffer{};
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buffer.index = index;
    if (io_ == Io::Mmap) {
        buffer.memory = V4L2_MEMORY_MMAP;
    } else {
        buffer.memory = V4L2_MEMORY_DMABUF;
        buffer.m.fd = dmabufs_.at(index);
        buffer.length = buffer_bytes_;
    }
    if (xioctl(fd_.get(), VIDIOC_QBUF, &buffer) < 0)
        return failed("VIDIOC_QBUF", fmt::format("buffer {}", index));
    return {};
}

Result<void> CaptureDevice::start()
{
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd_.get(), VIDIOC_STREAMON, &type) < 0)
        return failed("VIDIOC_STREAMON", card_);
    streaming_ = true;
    return {};
}

Result<std::optional<Captured>> CaptureDevice::dequeue(int timeout_ms)
{
    pollfd ready{fd_.get(), POLLIN, 0};
    const int polled = poll(&ready, 1, timeout_ms);
    if (polled < 0 && errno != EINTR)
        return tl::unexpected(failed("poll", card_).error());
    if (polled <= 0)
        return std::nullopt;
    v4l2_buffer buffer{};
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buffer.memory = io_ == Io::Mmap ? V4L2_MEMORY_MMAP : V4L2_MEMORY_DMABUF;
    if (xioctl(fd_.get(), VIDIOC_DQBUF, &buffer) < 0) {
        if (errno == EAGAIN)
            return std::nullopt;
        return tl::unexpected(failed("VIDIOC_DQBUF", card_).error());
    }
    const bool monotonic = (buffer.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
    const uint64_t timestamp_ns =
        monotonic ? uint64_t(buffer.timestamp.tv_sec) * 1000000000u + uint64_t(buffer.timestamp.tv_usec) * 1000u : 0;
    return Captured{buffer.index, buffer.sequence, timestamp_ns, (buffer.flags & V4L2_BUF_FLAG_ERROR) != 0};
}

} // namespace framecl::v4l2_capture
