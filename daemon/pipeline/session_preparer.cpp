#include "pipeline/session_preparer.hpp"

#include <algorithm>
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
        cancel_working_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void SessionPreparer::cancel(const std::vector<uint64_t>& tickets)
{
    const auto listed = [&](uint64_t ticket) { return std::find(tickets.begin(), tickets.end(), ticket) != tickets.end(); };
    std::lock_guard lock(mutex_);
    std::erase_if(requests_, [&](const Request& request) { return listed(request.ticket); });
    if (working_on_ != 0 && listed(working_on_))
        cancel_working_ = true;
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
            working_on_ = request.ticket;
            cancel_working_ = false;
        }
        const uint64_t ticket = request.ticket;
        const log::ScopedFields about(request.about);
        request.options.cancelled = &cancel_working_;
        if (request.tuner)
            request.options.stage_choices = request.tuner->choose(
                *request.definition, request.input, [&](const std::string& status) { report(ticket, status); },
                &cancel_working_);
        if (request.options.kernel_budget_ns > 0 && !cancel_working_)
            report(ticket, fmt::format("calibrating and recording for {}", describe(request.input)));
        Result<std::unique_ptr<Session>> session = fail(cancelled_text);
        if (!cancel_working_)
            session = Session::open(gpu_, request.definition, request.input, request.options);
        {
            std::lock_guard lock(mutex_);
            working_on_ = 0;
            if (!cancel_working_)
                prepared_.push_back({ticket, std::move(session)});
        }
        if (cancel_working_)
            log::get("pipeline")->info("opening a session of '{}' for {}: cancelled", request.definition->name,
                                       describe(request.input));
        wakeLoop();
    }
}

} // namespace framecl::pipeline
