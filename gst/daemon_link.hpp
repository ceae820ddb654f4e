#pragma once
// framecld as the element reaches it: one libframecl connection, made in start() and
// closed in stop(). libframecl wants one thread at a time, but a buffer the element
// registered may be freed on any thread (an appsink's, the application's), and its
// registration is released through this link then: every call takes the mutex. The
// link is shared (std::shared_ptr) with those registrations, so that a buffer freed
// after stop() finds the link closed, not a freed client.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <framecl/client.h>

#include "base/result.hpp"

namespace framecl::gst {

struct OpenedSession {
    uint32_t id;
    framecl_frame_layout output; // tightly packed, as framecl_open_session() says
};

class DaemonLink {
public:
    // `socket`: empty for $FRAMECL_SOCKET, else FRAMECL_DEFAULT_SOCKET. `timeout_ms`
    // bounds the connection, every request and the wait for each frame.
    static Result<std::shared_ptr<DaemonLink>> connect(const std::string& socket, int timeout_ms);

    DaemonLink(const DaemonLink&) = delete;
    DaemonLink& operator=(const DaemonLink&) = delete;
    ~DaemonLink();

    // Says Goodbye; the daemon frees the sessions and buffers still held. Later calls
    // fail, and releases do nothing.
    void close();

    // Fails, naming the pipelines offered, when the daemon has no pipeline `name`.
    Result<void> requirePipeline(const std::string& name);

    Result<OpenedSession> openSession(const std::string& pipeline, uint32_t fourcc, uint32_t width, uint32_t height);
    void closeSession(uint32_t session);

    // The library keeps a duplicate of `fd`; the caller keeps its own.
    Result<uint32_t> registerBuffer(int fd, const framecl_frame_layout& layout);
    void releaseBuffer(uint32_t buffer);

    // Runs one frame of `session` from buffer `input` into buffer `output` and waits
    // for its Done, at most the timeout.
    Result<void> process(uint32_t session, uint32_t input, uint32_t output);

private:
    DaemonLink(framecl_client* client, int timeout_ms) : client_(client), timeout_ms_(timeout_ms) {}

    std::mutex mutex_;
    framecl_client* client_; // nullptr once closed
    int timeout_ms_;
    uint64_t next_sequence_ = 1;
};

} // namespace framecl::gst
