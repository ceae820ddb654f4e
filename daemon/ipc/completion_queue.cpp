#include "ipc/completion_queue.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <sys/eventfd.h>
#include <unistd.h>

#include "gpu/cl_error.hpp"
#include "ipc/frame_metrics.hpp"

namespace framecl::ipc {
CompletionQueue::CompletionQueue() : shared_(std::make_shared<Shared>())
{
    shared_->event_fd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!shared_->event_fd.valid())
        throw std::runtime_error(std::string("eventfd failed: ") + std::strerror(errno));
}

Result<void> CompletionQueue::notifyOnCompletion(cl_event event, uint64_t frame)
{
    auto context = std::make_unique<CallbackContext>(CallbackContext{shared_, frame});
    const cl_int err = clSetEventCallback(event, CL_COMPLETE, &CompletionQueue::onEvent, context.get());
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clSetEventCallback", err, "frame completion"));
    context.release(); // the callback owns it now and frees it
    return {};
}

void CL_CALLBACK CompletionQueue::onEvent(cl_event, cl_int status, void* user_data)
{
    const uint64_t now_ns = monotonicNs();
    std::unique_ptr<CallbackContext> context(static_cast<CallbackContext*>(user_data));
    Shared& shared = *context->shared;
    {
        std::lock_guard lock(shared.mutex);
        shared.pending.push_back({context->frame, status, now_ns});
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t written = write(shared.event_fd.get(), &one, sizeof one);
}

std::vector<Completion> CompletionQueue::take()
{
    uint64_t count = 0;
    [[maybe_unused]] ssize_t got = read(shared_->event_fd.get(), &count, sizeof count);
    std::lock_guard lock(shared_->mutex);
    return std::exchange(shared_->pending, {});
}

} // namespace framecl::ipc
