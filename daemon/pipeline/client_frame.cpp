#include "pipeline/client_frame.hpp"

#include <fmt/format.h>

#include "gpu/cl_error.hpp"

namespace framecl::pipeline {
namespace {

// `hand_off` (ImportedBuffer::enqueueAcquire or enqueueRelease) for both buffers, in
// order; the last one's event, if any was needed.
using HandOff = Result<std::optional<cl::Event>> (memory::ImportedBuffer::*)(const cl::CommandQueue&) const;
Result<std::optional<cl::Event>> enqueueForBoth(HandOff hand_off, const memory::ImportedBuffer& in,
                                                const memory::ImportedBuffer& out, const cl::CommandQueue& queue)
{
    std::optional<cl::Event> last;
    for (const memory::ImportedBuffer* buffer : {&in, &out}) {
        auto handed = (buffer->*hand_off)(queue);
        if (!handed)
            return tl::unexpected(handed.error());
        if (*handed)
            last = std::move(*handed);
    }
    return last;
}

} // namespace

Result<ClientFrame> beginClientFrame(Session& session, const memory::ImportedBuffer& in,
                                     const memory::ImportedBuffer& out)
{
    auto frame = session.begin({in.mem(), &in.layout()}, {out.mem(), &out.layout()});
    if (!frame)
        return tl::unexpected(frame.error());
    return ClientFrame{std::move(*frame), false, {}};
}

Result<cl::Event> enqueueClientPart(Session& session, const memory::ImportedBuffer& in,
                                    const memory::ImportedBuffer& out, ClientFrame& frame, uint32_t lane)
{
    // Each lane is in order: each command starts after the one before it ended. The
    // buffers are acquired first (khr-dmabuf), the input copied up (host-copy), the
    // frame's parts run, the output copied back, and both released last; a part on
    // another lane waits for what it reads (Session::enqueuePart), and the last
    // commands for every lane.
    if (!session.hasLane(lane))
        return fail(fmt::format("a part on lane {}, which is not the session's", lane));
    const cl::CommandQueue& queue = session.laneQueue(lane);
    if (!frame.buffers_acquired) {
        auto acquired = enqueueForBoth(&memory::ImportedBuffer::enqueueAcquire, in, out, queue);
        if (!acquired)
            return tl::unexpected(acquired.error());
        std::optional<cl::Event> prepared = std::move(*acquired);
        frame.buffers_acquired = true;
        auto upload = in.enqueueUpload(queue);
        if (!upload)
            return tl::unexpected(upload.error());
        if (*upload)
            prepared = std::move(*upload);
        if (prepared)
            frame.frame.noteLaneWork(lane, std::move(*prepared), -1);
    }
    auto part = session.enqueuePart(frame.frame, lane);
    if (!part || !frame.frame.allEnqueued())
        return part;
    if (auto joined = session.joinLanes(frame.frame, lane); !joined)
        return tl::unexpected(joined.error());
    auto last = out.enqueueDownload(queue);
    if (!last)
        return tl::unexpected(last.error());
    auto released = enqueueForBoth(&memory::ImportedBuffer::enqueueRelease, in, out, queue);
    if (!released)
        return tl::unexpected(released.error());
    frame.done = *released ? std::move(**released) : *last ? std::move(**last) : *part;
    return frame.done;
}

Result<std::optional<cl::Event>> abandonClientFrame(const Session& session, const memory::ImportedBuffer& in,
                                                    const memory::ImportedBuffer& out, ClientFrame& frame)
{
    if (!frame.buffers_acquired)
        return std::nullopt;
    // On the lane of its last work, after the work of the others.
    const uint32_t lane = frame.frame.last_lane;
    const cl::CommandQueue& queue = session.laneQueue(lane);
    if (auto joined = session.joinLanes(frame.frame, lane); !joined)
        return tl::unexpected(joined.error());
    if (auto released = enqueueForBoth(&memory::ImportedBuffer::enqueueRelease, in, out, queue); !released)
        return tl::unexpected(released.error());
    cl_event marker = nullptr;
    if (const cl_int err = clEnqueueMarkerWithWaitList(queue(), 0, nullptr, &marker); err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueMarkerWithWaitList", err, "the end of an abandoned frame"));
    frame.done = cl::Event(marker); // takes the reference the enqueue returned
    return frame.done;
}

Result<ClientFrame> enqueueClientFrame(Session& session, const memory::ImportedBuffer& in,
                                       const memory::ImportedBuffer& out)
{
    auto frame = beginClientFrame(session, in, out);
    if (!frame)
        return frame;
    // The parts alternate between the session's lanes, as the daemon feeds them.
    const std::vector<uint32_t>& lanes = session.lanes();
    for (size_t next = 0; !frame->frame.allEnqueued(); next = (next + 1) % lanes.size())
        if (auto part = enqueueClientPart(session, in, out, *frame, lanes[next]); !part)
            return tl::unexpected(part.error());
    return frame;
}

} // namespace framecl::pipeline
