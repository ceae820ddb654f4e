#include "pipeline/client_frame.hpp"

namespace framecl::pipeline {

Result<ClientFrame> enqueueClientFrame(Session& session, const memory::ImportedBuffer& in,
                                       const memory::ImportedBuffer& out, const cl::CommandQueue& queue)
{
    // The queue is in order: each command starts after the one before it ended. The
    // buffers are acquired first (khr-dmabuf), the input copied up (host-copy), the
    // frame run, the output copied back, and both released last.
    for (const memory::ImportedBuffer* buffer : {&in, &out})
        if (const auto acquired = buffer->enqueueAcquire(queue); !acquired)
            return tl::unexpected(acquired.error());
    const auto upload = in.enqueueUpload(queue);
    if (!upload)
        return tl::unexpected(upload.error());
    auto frame = session.enqueue({in.mem(), &in.layout()}, {out.mem(), &out.layout()});
    if (!frame)
        return tl::unexpected(frame.error());
    auto last = out.enqueueDownload(queue);
    if (!last)
        return tl::unexpected(last.error());
    for (const memory::ImportedBuffer* buffer : {&in, &out}) {
        auto released = buffer->enqueueRelease(queue);
        if (!released)
            return tl::unexpected(released.error());
        if (*released)
            last = std::move(released);
    }
    cl::Event done = *last ? std::move(**last) : frame->events.back();
    return ClientFrame{std::move(*frame), std::move(done)};
}

} // namespace framecl::pipeline
