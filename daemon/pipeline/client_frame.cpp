#include "pipeline/client_frame.hpp"

#include <fmt/format.h>

#include "gpu/cl_error.hpp"

namespace framecl::pipeline {
namespace {

// Acquires (khr-dmabuf) whichever of the frame's buffers it has not acquired yet, or
// releases whichever it holds, in order, noting each as it is enqueued; the last one's
// event, if any was needed. On an error the flags say what is still held.
Result<std::optional<cl::Event>> handOffBoth(bool acquire, const memory::ImportedBuffer& in,
                                             const memory::ImportedBuffer& out, ClientFrame& frame,
                                             const cl::CommandQueue& queue)
{
    std::optional<cl::Event> last;
    for (auto [buffer, held] : {std::pair{&in, &frame.input_acquired}, std::pair{&out, &frame.output_acquired}}) {
        if (*held == acquire)
            continue;
        auto handed = acquire ? buffer->enqueueAcquire(queue) : buffer->enqueueRelease(queue);
        if (!handed)
            return tl::unexpected(handed.error());
        *held = acquire;
        if (*handed)
            last = std::move(*handed);
    }
    return last;
}

} // namespace

Result<ClientFrame> beginClientFrame(Session& session, const memory::ImportedBuffer& in,
                                     const memory::ImportedBuffer& out,
                                     std::shared_ptr<const ParameterSet> parameters)
{
    auto frame = session.begin({in.mem(), &in.layout()}, {out.mem(), &out.layout()}, std::move(parameters));
    if (!frame)
        return tl::unexpected(frame.error());
    ClientFrame begun;
    begun.frame = std::move(*frame);
    return begun;
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
    if (!frame.prepared) {
        frame.frame.last_lane = lane; // where an abandoned frame's end goes, should this fail
        auto acquired = handOffBoth(true, in, out, frame, queue);
        if (!acquired)
            return tl::unexpected(acquired.error());
        std::optional<cl::Event> prepared = std::move(*acquired);
        frame.prepared = true;
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
    auto released = handOffBoth(false, in, out, frame, queue);
    if (!released)
        return tl::unexpected(released.error());
    frame.done = *released ? std::move(**released) : *last ? std::move(**last) : *part;
    return frame.done;
}

Result<std::optional<cl::Event>> abandonClientFrame(const Session& session, const memory::ImportedBuffer& in,
                                                    const memory::ImportedBuffer& out, ClientFrame& frame)
{
    if (!frame.prepared && !frame.input_acquired && !frame.output_acquired)
        return std::nullopt; // nothing of it was enqueued
    // On the lane of its last work, after the work of the others.
    const uint32_t lane = frame.frame.last_lane;
    const cl::CommandQueue& queue = session.laneQueue(lane);
    if (auto joined = session.joinLanes(frame.frame, lane); !joined)
        return tl::unexpected(joined.error());
    if (auto released = handOffBoth(false, in, out, frame, queue); !released)
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
