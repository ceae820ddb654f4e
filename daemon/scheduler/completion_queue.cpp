#include "scheduler/completion_queue.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <sys/eventfd.h>
#include <unistd.h>

#include "base/monotonic_clock.hpp"

namespace framecl::scheduler {

CompletionQueue::CompletionQueue(uint32_t lanes) : shared_(std::make_shared<Shared>())
{
    shared_->event_fd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!shared_->event_fd.valid())
        throw std::runtime_error(std::string("eventfd failed: ") + std::strerror(errno));
    shared_->watched.resize(std::max<uint32_t>(lanes, 1));
    for (uint32_t lane = 0; lane < shared_->watched.size(); ++lane)
        std::thread(waitInTurn, shared_, lane).detach();
}

CompletionQueue::~CompletionQueue()
{
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
    for (auto& watched : shared_->watched)
        watched.clear();
    shared_->wake.notify_all();
}

void CompletionQueue::notifyOnCompletion(const cl::Event& event, uint64_t frame, uint32_t lane)
{
    std::lock_guard lock(shared_->mutex);
    shared_->watched.at(lane).push_back({event, frame});
    shared_->wake.notify_all();
}

void CompletionQueue::waitInTurn(std::shared_ptr<Shared> shared, uint32_t lane)
{
    std::unique_lock lock(shared->mutex);
    std::deque<Watched>& watched = shared->watched[lane];
    for (;;) {
        shared->wake.wait(lock, [&] { return shared->stopping || !watched.empty(); });
        if (shared->stopping)
            return;
        const Watched next = watched.front();
        lock.unlock();
        // A negative status makes the wait fail; the status itself says what happened.
        const cl_event event = next.event();
        clWaitForEvents(1, &event);
        const uint64_t now_ns = monotonicNs();
        cl_int status = CL_COMPLETE;
        if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
            status = CL_INVALID_EVENT;
        lock.lock();
        if (!watched.empty() && watched.front().frame == next.frame)
            watched.pop_front();
        shared->done.push_back({next.frame, status, now_ns});
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t written = write(shared->event_fd.get(), &one, sizeof one);
    }
}

std::vector<Completion> CompletionQueue::take()
{
    uint64_t count = 0;
    [[maybe_unused]] ssize_t got = read(shared_->event_fd.get(), &count, sizeof count);
    std::lock_guard lock(shared_->mutex);
    return std::exchange(shared_->done, {});
}

} // namespace framecl::scheduler
