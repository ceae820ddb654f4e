#include "ipc/completion_queue.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <sys/eventfd.h>
#include <unistd.h>

#include "gpu/cl_error.hpp"

namespace framecl::ipc {
namespace {

struct CallbackContext {
    CompletionQueue* queue;
    uint64_t frame;
};

} // namespace

CompletionQueue::CompletionQueue() : event_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    if (!event_fd_.valid())
        throw std::runtime_error(std::string("eventfd failed: ") + std::strerror(errno));
}

Result<void> CompletionQueue::notifyOnCompletion(cl_event event, uint64_t frame)
{
    auto context = std::make_unique<CallbackContext>(CallbackContext{this, frame});
    const cl_int err = clSetEventCallback(event, CL_COMPLETE, &CompletionQueue::onEvent, context.get());
    if (err != CL_SUCCESS)
        return fail(gpu::clFailure("clSetEventCallback", err, "frame completion"));
    context.release(); // the callback owns it now and frees it
    return {};
}

void CL_CALLBACK CompletionQueue::onEvent(cl_event, cl_int status, void* user_data)
{
    std::unique_ptr<CallbackContext> context(static_cast<CallbackContext*>(user_data));
    context->queue->push({context->frame, status});
}

void CompletionQueue::push(Completion completion)
{
    {
        std::lock_guard lock(mutex_);
        pending_.push_back(completion);
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t written = write(event_fd_.get(), &one, sizeof one);
}

std::vector<Completion> CompletionQueue::take()
{
    uint64_t count = 0;
    [[maybe_unused]] ssize_t got = read(event_fd_.get(), &count, sizeof count);
    std::lock_guard lock(mutex_);
    return std::exchange(pending_, {});
}

} // namespace framecl::ipc
