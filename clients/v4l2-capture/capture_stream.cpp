#include "capture_stream.hpp"

#include <cstring>
#include <map>
#include <poll.h>
#include <time.h>

#include <fmt/format.h>

#include "client-tools/buffer_mapping.hpp"
#include "client-tools/frame_file.hpp"
#include "plane_rows.hpp"

namespace framecl::v4l2_capture {
namespace {

uint64_t monotonicNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
}

// A frame buffer of this process: its dma-buf (or memfd), mapped to read it, and its
// id at framecld.
struct FrameBuffer {
    UniqueFd fd;
    cli::BufferMapping mapping;
    uint32_t id;
};

Result<FrameBuffer> shareBuffer(Client& client, UniqueFd fd, uint64_t bytes, const framecl_frame_layout& layout)
{
    auto mapping = cli::BufferMapping::map(fd.get(), bytes);
    if (!mapping)
        return tl::unexpected(mapping.error());
    const uint32_t id = client.registerBuffer(fd.get(), layout);
    return FrameBuffer{std::move(fd), std::move(*mapping), id};
}

// Whether frames of the same format and size, laid out as `a_layout` in `a` and as
// `b_layout` in `b`, hold the same pixels: every row of every plane.
bool sameRows(const framecl_frame_layout& a_layout, const uint8_t* a, const framecl_frame_layout& b_layout,
              const uint8_t* b)
{
    for (uint32_t p = 0; p < a_layout.num_planes; ++p) {
        const protocol::PlaneRows in_a = protocol::planeRows(a_layout, p);
        const protocol::PlaneRows in_b = protocol::planeRows(b_layout, p);
        for (uint64_t y = 0; y < in_a.rows; ++y)
            if (std::memcmp(a + in_a.offset + y * in_a.stride, b + in_b.offset + y * in_b.stride,
                            in_a.row_bytes) != 0)
                return false;
    }
    return true;
}

class CaptureStream {
public:
    CaptureStream(Client& client, CaptureDevice& device, const StreamSettings& settings)
        : client_(client), device_(device), settings_(settings)
    {
    }

    // Opens the session and registers the capture and output buffers once.
    Result<void> setUp(StreamReport& report)
    {
        const framecl_frame_layout& in = device_.layout();
        session_ = client_.openSession(settings_.pipeline, in.fourcc, in.width, in.height);
        report.output = session_.output;
        std::vector<UniqueFd> captures;
        if (settings_.io == Io::Mmap) {
            auto exported = device_.exportBuffers(settings_.buffers);
            if (!exported)
                return tl::unexpected(exported.error());
            captures = std::move(*exported);
        } else {
            std::vector<int> fds;
            for (uint32_t i = 0; i < settings_.buffers; ++i) {
                auto fd = allocate(device_.bufferBytes(), nullptr);
                if (!fd)
                    return tl::unexpected(fd.error());
                fds.push_back(fd->get());
                captures.push_back(std::move(*fd));
            }
            if (auto imported = device_.importBuffers(fds); !imported)
                return imported;
        }
        for (UniqueFd& fd : captures) {
            auto shared = shareBuffer(client_, std::move(fd), device_.bufferBytes(), in);
            if (!shared)
                return tl::unexpected(shared.error());
            captures_.push_back(std::move(*shared));
        }
        // As many outputs as captures: each frame in flight has one.
        const uint64_t output_bytes = framecl_layout_end(&session_.output);
        for (size_t i = 0; i < captures_.size(); ++i) {
            auto fd = allocate(output_bytes, &report.output_buffers);
            if (!fd)
                return tl::unexpected(fd.error());
            auto shared = shareBuffer(client_, std::move(*fd), output_bytes, session_.output);
            if (!shared)
                return tl::unexpected(shared.error());
            outputs_.push_back(std::move(*shared));
            free_outputs_.push_back(outputs_.size() - 1);
        }
        for (uint32_t index = 0; index < captures_.size(); ++index)
            if (auto queued = device_.queue(index); !queued)
                return queued;
        return device_.start();
    }

    // Sends settings_.frames captures through framecld, then waits for the last Dones.
    void run(StreamReport& report)
    {
        const int client_fd = client_.fd();
        while (report.frames < settings_.frames || !in_flight_.empty()) {
            // A capture is taken only while an output is free for it.
            const bool take = report.frames < settings_.frames && !free_outputs_.empty();
            pollfd ready[2] = {{client_fd, POLLIN, 0}, {device_.fd(), short(take ? POLLIN : 0), 0}};
            const int polled = poll(ready, 2, settings_.timeout_ms);
            if (polled == 0) {
                report.error = take ? fmt::format("neither a frame from {} nor a Done came within {} ms (--timeout)",
                                                  settings_.device, settings_.timeout_ms)
                                    : fmt::format("no Done came within {} ms (--timeout)", settings_.timeout_ms);
                return;
            }
            while (auto done = client_.nextDone(0))
                if (auto ended = frameEnded(*done, report); !ended) {
                    report.error = ended.error().message;
                    return;
                }
            if (take && (ready[1].revents & POLLIN))
                if (auto sent = sendCapture(report); !sent) {
                    report.error = sent.error().message;
                    return;
                }
        }
    }

private:
    struct InFlight {
        uint32_t capture; // the V4L2 buffer's index
        size_t output;
        uint64_t submitted_ns;
        uint64_t captured_ns;
    };

    Result<UniqueFd> allocate(uint64_t bytes, framecl_buffer_source* used) const
    {
        const int fd = framecl_allocate_buffer(&settings_.allocate, bytes, used);
        if (fd < 0)
            return fail(fmt::format("allocating a buffer of {} bytes: {}", bytes, framecl_last_error(nullptr)));
        return UniqueFd(fd);
    }

    Result<void> sendCapture(StreamReport& report)
    {
        auto captured = device_.dequeue(0);
        if (!captured)
            return tl::unexpected(captured.error());
        if (!*captured)
            return {};
        const Captured& frame = **captured;
        if (last_sequence_ && frame.sequence > *last_sequence_ + 1)
            report.skipped += frame.sequence - *last_sequence_ - 1;
        last_sequence_ = frame.sequence;
        if (frame.corrupted) {
            ++report.corrupted;
            return device_.queue(frame.index);
        }
        const size_t output = free_outputs_.back();
        free_outputs_.pop_back();
        const uint64_t sequence = report.frames++;
        const uint64_t now = monotonicNs();
        if (sequence == 0)
            report.first_submit_s = double(now) / 1e9;
        in_flight_[sequence] = InFlight{frame.index, output, now, frame.timestamp_ns};
        client_.submit(session_.id, captures_.at(frame.index).id, outputs_[output].id, sequence);
        return {};
    }

    // The frame's buffers are framecld's no more: check or write the output, and give
    // the capture buffer back to the device.
    Result<void> frameEnded(const framecl_done& done, StreamReport& report)
    {
        const auto it = in_flight_.find(done.sequence);
        if (it == in_flight_.end())
            return fail(fmt::format("a Done for frame {}, which is not in flight", done.sequence));
        const InFlight frame = it->second;
        in_flight_.erase(it);
        const uint64_t now = monotonicNs();
        report.last_done_s = double(now) / 1e9;
        switch (done.status) {
        case FRAMECL_FRAME_OK:
            ++report.ok;
            if (auto statistics = client_.doneStatistics()) {
                ++report.with_statistics;
                report.last_statistics = *statistics;
            }
            report.latency_ms.push_back(double(now - frame.submitted_ns) / 1e6);
            if (frame.captured_ns && now > frame.captured_ns)
                report.capture_latency_ms.push_back(double(now - frame.captured_ns) / 1e6);
            if (auto checked = useOutput(done.sequence, frame, report); !checked)
                return checked;
            break;
        case FRAMECL_FRAME_FAILED:
            ++report.failed;
            if (report.error.empty())
                report.error = fmt::format("frame {} failed: {}", done.sequence, done.error);
            break;
        case FRAMECL_FRAME_DROPPED:
            ++report.dropped;
            break;
        case FRAMECL_FRAME_BUSY:
            ++report.busy;
            break;
        case FRAMECL_FRAME_LOST:
            ++report.lost;
            break;
        }
        free_outputs_.push_back(frame.output);
        // Captures left to take need the buffer; at the end the device keeps it.
        if (report.frames < settings_.frames)
            return device_.queue(frame.capture);
        return {};
    }

    // Reads the output (and the capture, for --verify) between the CPU-access calls.
    Result<void> useOutput(uint64_t sequence, const InFlight& frame, StreamReport& report)
    {
        if (!settings_.verify && settings_.output_files == OutputFiles::None && !settings_.save_captures)
            return {};
        const FrameBuffer& output = outputs_[frame.output];
        const FrameBuffer& capture = captures_.at(frame.capture);
        const bool read_capture = settings_.verify || settings_.save_captures;
        if (framecl_begin_cpu_access(output.fd.get(), FRAMECL_CPU_READ) < 0)
            return fail(fmt::format("frame {}: {}", sequence, framecl_last_error(nullptr)));
        if (read_capture && framecl_begin_cpu_access(capture.fd.get(), FRAMECL_CPU_READ) < 0) {
            const std::string why = framecl_last_error(nullptr);
            framecl_end_cpu_access(output.fd.get(), FRAMECL_CPU_READ);
            return fail(fmt::format("frame {}: {}", sequence, why));
        }
        Result<void> used;
        if (settings_.verify && !sameRows(device_.layout(), capture.mapping.bytes().data(), session_.output,
                                          output.mapping.bytes().data()))
            ++report.mismatches;
        if (settings_.output_files != OutputFiles::None) {
            const bool png =
                settings_.output_files == OutputFiles::Png && cli::pngHoldsFormat(session_.output.fourcc);
            const auto file =
                settings_.output_dir / fmt::format("frame-{:06}{}", sequence, png ? ".png" : ".raw");
            used = png ? cli::writePngFrame(file, session_.output, output.mapping.bytes())
                       : cli::writeRawFrame(file, session_.output, output.mapping.bytes());
        }
        if (used && settings_.save_captures)
            used = cli::writeRawFrame(settings_.output_dir / fmt::format("capture-{:06}.raw", sequence),
                                      device_.layout(), capture.mapping.bytes());
        if (read_capture)
            framecl_end_cpu_access(capture.fd.get(), FRAMECL_CPU_READ);
        framecl_end_cpu_access(output.fd.get(), FRAMECL_CPU_READ);
        return used;
    }

    Client& client_;
    CaptureDevice& device_;
    const StreamSettings& settings_;
    Session session_{};
    std::vector<FrameBuffer> captures_; // by V4L2 buffer index
    std::vector<FrameBuffer> outputs_;
    std::vector<size_t> free_outputs_;
    std::map<uint64_t, InFlight> in_flight_; // by sequence
    std::optional<uint32_t> last_sequence_;  // the driver's counter
};

} // namespace

Result<StreamReport> streamCapture(Client& client, const StreamSettings& settings)
{
    auto device = CaptureDevice::open(settings.device, settings.fourcc, settings.width, settings.height);
    if (!device)
        return tl::unexpected(device.error());
    StreamReport report;
    report.card = device->card();
    report.input = device->layout();
    CaptureStream stream(client, *device, settings);
    try {
        if (auto set = stream.setUp(report); !set)
            return tl::unexpected(set.error());
        stream.run(report);
    } catch (const ClientError& error) {
        return fail(fmt::format("framecld: {}", error.what()));
    }
    return report;
}

} // namespace framecl::v4l2_capture
