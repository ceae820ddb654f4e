#include "pipeline/client_frame.hpp"

#include "gpu/cl_error.hpp"

namespace framecl::pipeline {
namespace {

// The buffers' releases, in order; the last one's event, if any was needed.
Result<std::optional<cl::Event>> enqueueReleases(const memory::ImportedBuffer& in, const memory::ImportedBuffer& out,
                                                 const cl::CommandQueue& queue)
{
    std::optional<cl::Event> last;
    for (const memory::ImportedBuffer* buffer : {&in, &out}) {
        auto released = buffer->enqueueRelease(queue);
        if (!released)
            return tl::unexpected(released.error());
        if (*released)
            last = std::move(*released);
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

Result<cl::Event> enqueueClientPart(const Session& session, const memory::ImportedBuffer& in,
                                    const memory::ImportedBuffer& out, ClientFrame& frame,
                                    const cl::CommandQueue& queue)
{
    // The queue is in order: each command starts after the one before it ended. The
    // buffers are acquired first (khr-dmabuf), the input copied up (host-copy), the
    // frame's parts run, the output copied back, and both released last.
    if (!frame.buffers_acquired) {
        for (const memory::ImportedBuffer* buffer : {&in, &out})
            if (const auto acquired = buffer->enqueueAcquire(queue); !acquired)
                return tl::unexpected(acquired.error());
        frame.buffers_acquired = true;
        if (const auto upload = in.enqueueUpload(queue); !upload)
            return tl::unexpected(upload.error());
    }
    auto part = session.enqueuePart(frame.frame);
    if (!part || !frame.frame.allEnqueued())
        return part;
    auto last = out.enqueueDownload(queue);
    if (!last)
        return tl::unexpected(last.error());
    auto released = enqueueReleases(in, out, queue);
    if (!released)
        return tl::unexpected(released.error());
    frame.done = *released ? std::move(**released) : *last ? std::move(**last) : *part;
    return frame.done;
}

Result<std::optional<cl::Event>> abandonClientFrame(const memory::ImportedBuffer& in,
                                                    const memory::ImportedBuffer& out, ClientFrame& frame,
                                                    const cl::CommandQueue& queue)
{
    if (!frame.buffers_acquired)
        return std::nullopt;
    if (auto released = enqueueReleases(in, out, queue); !released)
        return tl::unexpected(released.error());
    cl_event marker = nullptr;
    if (const cl_int err = clEnqueueMarkerWithWaitList(queue(), 0, nullptr, &marker); err != CL_SUCCESS)
        return fail(gpu::clFailure("clEnqueueMarkerWithWaitList", err, "the end of an abandoned frame"));
    frame.done = cl::Event(marker); // takes the reference the enqueue returned
    return frame.done;
}

Result<ClientFrame> enqueueClientFrame(Session& session, const memory::ImportedBuffer& in,
                                       const memory::ImportedBuffer& out, const cl::CommandQueue& queue)
{
    auto frame = beginClientFrame(session, in, out);
    if (!frame)
        return frame;
    while (!frame->frame.allEnqueued())
        if (auto part = enqueueClientPart(session, in, out, *frame, queue); !part)
            return tl::unexpected(part.error());
    return frame;
}

} // namespace framecl::pipeline
