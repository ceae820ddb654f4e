#include "pipeline/session_preparer.hpp"

#include <cstring>

#include <sys/eventfd.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/log.hpp"

namespace framecl::pipeline {

SessionPreparer::SessionPreparer(const gpu::GpuContext& gpu)
    : gpu_(gpu), ready_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), thread_([this] { run(); })
{
    if (!ready_fd_.valid())
        log::get("pipeline")->error("eventfd: {}", std::strerror(errno));
}

SessionPreparer::~SessionPreparer()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        requests_.clear();
    }
    wake_.notify_one();
    thread_.join();
}

void SessionPreparer::prepare(Request request)
{
    {
        std::lock_guard lock(mutex_);
        requests_.push_back(std::move(request));
    }
    wake_.notify_one();
}

std::pair<std::vector<SessionPreparer::Progress>, std::vector<SessionPreparer::Prepared>> SessionPreparer::take()
{
    uint64_t count = 0;
    [[maybe_unused]] ssize_t got = read(ready_fd_.get(), &count, sizeof count);
    std::lock_guard lock(mutex_);
    return {std::exchange(progress_, {}), std::exchange(prepared_, {})};
}

void SessionPreparer::report(uint64_t ticket, std::string status)
{
    {
        std::lock_guard lock(mutex_);
        progress_.push_back({ticket, std::move(status)});
    }
    wakeLoop();
}

void SessionPreparer::wakeLoop()
{
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t written = write(ready_fd_.get(), &one, sizeof one);
}

void SessionPreparer::run()
{
    for (;;) {
        Request request;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !requests_.empty(); });
            if (stopping_)
                return;
            request = std::move(requests_.front());
            requests_.pop_front();
        }
        const uint64_t ticket = request.ticket;
        const log::ScopedFields about(request.about);
        if (request.tuner)
            request.options.stage_choices = request.tuner->choose(
                *request.definition, request.input, [&](const std::string& status) { report(ticket, status); });
        if (request.options.kernel_budget_ns > 0)
            report(ticket, fmt::format("calibrating and recording for {}", describe(request.input)));
        auto session = Session::open(gpu_, request.definition, request.input, request.options);
        {
            std::lock_guard lock(mutex_);
            prepared_.push_back({ticket, std::move(session)});
        }
        wakeLoop();
    }
}

} // namespace framecl::pipeline
