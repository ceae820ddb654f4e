#include "daemon_link.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <fmt/format.h>

#include "debug_category.hpp"

namespace framecl::gst {
namespace {

// Matched by [[client_class]] match_name in framecld.toml.
constexpr const char* client_name = "gst-framecl";

// A session's first open may tune for seconds: the debug log says what it waits for.
void logStatus(void*, const char* status)
{
    GST_INFO("framecld: %s", status);
}

std::string frameFailure(const framecl_done& done)
{
    switch (done.status) {
    case FRAMECL_FRAME_OK:
        return "";
    case FRAMECL_FRAME_FAILED:
        return fmt::format("framecld failed the frame: {}", done.error);
    case FRAMECL_FRAME_DROPPED:
        return "framecld dropped the frame";
    case FRAMECL_FRAME_BUSY:
        return "framecld refused the frame: too many frames in flight";
    case FRAMECL_FRAME_LOST:
        return "framecld went away while processing the frame";
    }
    return fmt::format("framecld answered the frame with an unknown status {}", int(done.status));
}

} // namespace

Result<std::shared_ptr<DaemonLink>> DaemonLink::connect(const std::string& socket, int timeout_ms)
{
    const framecl_connect_options options{socket.empty() ? nullptr : socket.c_str(), client_name, timeout_ms};
    framecl_client* client = nullptr;
    // The library's error text names the socket it tried.
    if (framecl_connect(&options, &client) != 0)
        return fail(framecl_last_error(nullptr));
    framecl_set_status_callback(client, logStatus, nullptr);
    return std::shared_ptr<DaemonLink>(new DaemonLink(client, timeout_ms));
}

DaemonLink::~DaemonLink()
{
    close();
}

void DaemonLink::close()
{
    std::lock_guard lock(mutex_);
    framecl_disconnect(client_);
    client_ = nullptr;
}

Result<void> DaemonLink::requirePipeline(const std::string& name)
{
    std::lock_guard lock(mutex_);
    if (!client_)
        return fail("not connected to framecld");
    std::string offered;
    for (size_t i = 0; i < framecl_pipeline_count(client_); ++i) {
        if (name == framecl_pipeline_name(client_, i))
            return {};
        offered += fmt::format("{}{}", i ? ", " : "", framecl_pipeline_name(client_, i));
    }
    return fail(fmt::format("framecld offers no pipeline '{}' (it offers: {})", name, offered));
}

Result<OpenedSession> DaemonLink::openSession(const std::string& pipeline, uint32_t fourcc, uint32_t width,
                                              uint32_t height)
{
    std::lock_guard lock(mutex_);
    if (!client_)
        return fail("not connected to framecld");
    OpenedSession session{};
    if (framecl_open_session(client_, pipeline.c_str(), fourcc, width, height, nullptr, 0, &session.id,
                             &session.output) != 0)
        return fail(fmt::format("opening pipeline '{}' for {} {}x{} frames: {}", pipeline,
                                framecl_format_name(fourcc), width, height, framecl_last_error(client_)));
    return session;
}

void DaemonLink::closeSession(uint32_t session)
{
    // A failure leaves nothing to undo: the daemon closes what is left at Goodbye.
    std::lock_guard lock(mutex_);
    if (client_)
        framecl_close_session(client_, session);
}

Result<uint32_t> DaemonLink::registerBuffer(int fd, const framecl_frame_layout& layout)
{
    std::lock_guard lock(mutex_);
    if (!client_)
        return fail("not connected to framecld");
    uint32_t id = 0;
    if (framecl_register_buffer(client_, fd, &layout, &id) != 0)
        return fail(fmt::format("registering a {} {}x{} buffer with framecld: {}", framecl_format_name(layout.fourcc),
                                layout.width, layout.height, framecl_last_error(client_)));
    return id;
}

void DaemonLink::releaseBuffer(uint32_t buffer)
{
    // As closeSession(): Goodbye frees whatever a failed release leaves.
    std::lock_guard lock(mutex_);
    if (client_)
        framecl_release_buffer(client_, buffer);
}

Result<void> DaemonLink::process(uint32_t session, uint32_t input, uint32_t output)
{
    std::lock_guard lock(mutex_);
    if (!client_)
        return fail("not connected to framecld");
    const uint64_t sequence = next_sequence_++;
    if (framecl_submit(client_, session, input, output, sequence) != 0)
        return fail(fmt::format("submitting a frame to framecld: {}", framecl_last_error(client_)));

    // A Done that comes after its frame's timeout is skipped. The deadline covers the
    // whole wait, however many such Dones arrive first.
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
    framecl_done done{};
    do {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        const int waited = framecl_next_done(client_, int(std::max<int64_t>(left.count(), 0)), &done);
        if (waited == -ETIMEDOUT || waited == -EAGAIN)
            return fail(fmt::format("no answer from framecld within {} ms (the timeout-ms property)", timeout_ms_));
        if (waited != 0)
            return fail(fmt::format("waiting for framecld: {}", framecl_last_error(client_)));
    } while (done.sequence != sequence);
    if (done.status != FRAMECL_FRAME_OK)
        return fail(frameFailure(done));
    return {};
}

} // namespace framecl::gst
