#include "pipeline/client_frame.hpp"

namespace framecl::pipeline {

Result<ClientFrame> enqueueClientFrame(Session& session, const memory::ImportedBuffer& in,
                                       const memory::ImportedBuffer& out, const cl::CommandQueue& queue)
{
    // The queue is in order: the upload completes before the first dispatch reads the
    // input, and the download starts after the last dispatch wrote the output.
    const auto upload = in.enqueueUpload(queue);
    if (!upload)
        return tl::unexpected(upload.error());
    auto frame = session.enqueue({in.mem(), &in.layout()}, {out.mem(), &out.layout()});
    if (!frame)
        return tl::unexpected(frame.error());
    auto download = out.enqueueDownload(queue);
    if (!download)
        return tl::unexpected(download.error());
    cl::Event done = *download ? std::move(**download) : frame->events.back();
    return ClientFrame{std::move(*frame), std::move(done)};
}

} // namespace framecl::pipeline
