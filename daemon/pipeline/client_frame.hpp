#pragma once
// One frame of a session between two imported client buffers, with the copies a
// device without unified memory needs (memory::ImportPath::HostCopy) around it: the
// daemon and the in-process transport bench enqueue frames this one way.

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

struct ClientFrame {
    EnqueuedFrame frame;
    cl::Event done; // completes last: a release, the output's copy back, or the frame's last dispatch
};

// Enqueues, on the device's in-order queue, the buffers' acquire (khr-dmabuf), the
// input's upload (host-copy), the session's frame, the output's download (host-copy)
// and the buffers' release (khr-dmabuf), each where the buffer's path needs it. Returns at once. On an error,
// whatever was enqueued before it may still run.
Result<ClientFrame> enqueueClientFrame(Session& session, const memory::ImportedBuffer& in,
                                       const memory::ImportedBuffer& out, const cl::CommandQueue& queue);

} // namespace framecl::pipeline
