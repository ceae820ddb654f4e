#pragma once
// One frame of a session between two imported client buffers, with the copies a
// device without unified memory needs (memory::ImportPath::HostCopy) around it: the
// daemon and the in-process transport bench enqueue frames this one way, the daemon
// part by part so that other clients' work may run between the parts.

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

struct ClientFrame {
    EnqueuedFrame frame;
    bool prepared = false; // the acquires and the upload are enqueued
    // Acquired (khr-dmabuf) and not yet released, each on its own: a failure between the
    // two acquires or the two releases leaves exactly one to release.
    bool input_acquired = false;
    bool output_acquired = false;
    cl::Event done; // once the last part is enqueued: completes last (a release, the output's copy back, or the last dispatch)
};

// Starts a frame of `session` from `in` to `out` with `parameters` (Session::begin);
// enqueues nothing yet.
Result<ClientFrame> beginClientFrame(Session& session, const memory::ImportedBuffer& in,
                                     const memory::ImportedBuffer& out,
                                     std::shared_ptr<const ParameterSet> parameters = nullptr);

// Enqueues the frame's next part on GPU lane `lane`, one of Session::lanes(),
// and returns at once, with the event that ends what it enqueued: before the first
// part, the buffers' acquire (khr-dmabuf) and the input's upload (host-copy); after the
// last, once the frame's work on the other lanes is done, the output's download
// (host-copy) and the buffers' release (khr-dmabuf), each where the buffer's path needs
// it. On an error, whatever was enqueued before it may still run.
Result<cl::Event> enqueueClientPart(Session& session, const memory::ImportedBuffer& in,
                                    const memory::ImportedBuffer& out, ClientFrame& frame, uint32_t lane);

// Ends a frame whose remaining parts will not run (a part failed to enqueue, or its
// client went away): releases the buffers it acquired, and returns an event that
// completes after everything the frame enqueued, on the lane of its last part
// (frame.frame.last_lane); none where it enqueued nothing.
Result<std::optional<cl::Event>> abandonClientFrame(const Session& session, const memory::ImportedBuffer& in,
                                                    const memory::ImportedBuffer& out, ClientFrame& frame);

// A whole frame, every part at once, alternating the session's lanes; frame.done
// completes last.
Result<ClientFrame> enqueueClientFrame(Session& session, const memory::ImportedBuffer& in,
                                       const memory::ImportedBuffer& out);

} // namespace framecl::pipeline
