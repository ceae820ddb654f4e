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

std::optional<Result<cl::Event>> PendingTurn::run()
{
    {
        std::lock_guard lock(mutex_);
        if (state_ != State::Waiting)
            return std::nullopt;
        state_ = State::Running;
    }
    Result<cl::Event> result = enqueue_();
    {
        std::lock_guard lock(mutex_);
        state_ = State::Ran;
        result_ = result;
    }
    changed_.notify_all();
    return result;
}

Result<cl::Event> PendingTurn::await(const std::atomic<bool>& cancelled)
{
    std::unique_lock lock(mutex_);
    // Once running it is enqueued in a moment, and must not outlive what it enqueues.
    changed_.wait(lock, [&] { return state_ == State::Ran || (state_ == State::Waiting && cancelled); });
    if (state_ == State::Ran)
        return std::move(*result_);
    state_ = State::Abandoned;
    return fail(cancelled_text);
}

void PendingTurn::wake()
{
    // Under the lock, so that a waiter between its check and its wait still hears it.
    std::lock_guard lock(mutex_);
    changed_.notify_all();
}

SessionPreparer::~SessionPreparer()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        requests_.clear();
        cancel_working_ = true;
        if (waiting_turn_)
            waiting_turn_->wake();
    }
    wake_.notify_one();
    thread_.join();
}

void SessionPreparer::cancel(const std::vector<uint64_t>& tickets)
{
    const auto listed = [&](uint64_t ticket) { return std::find(tickets.begin(), tickets.end(), ticket) != tickets.end(); };
    std::lock_guard lock(mutex_);
    std::erase_if(requests_, [&](const Request& request) { return listed(request.ticket); });
    if (working_on_ != 0 && listed(working_on_)) {
        cancel_working_ = true;
        if (waiting_turn_)
            waiting_turn_->wake();
    }
}

Result<cl::Event> SessionPreparer::enqueueInTurn(uint64_t predicted_ns, uint32_t lane, const EnqueueWork& enqueue)
{
    auto turn = std::make_shared<PendingTurn>(working_on_, predicted_ns, lane, enqueue);
    {
        std::lock_guard lock(mutex_);
        turns_.push_back(turn);
        waiting_turn_ = turn;
    }
    wakeLoop();
    auto result = turn->await(cancel_working_);
    std::lock_guard lock(mutex_);
    waiting_turn_.reset();
    return result;
}

void SessionPreparer::prepare(Request request)
{
    {
        std::lock_guard lock(mutex_);
        requests_.push_back(std::move(request));
    }
    wake_.notify_one();
}

SessionPreparer::Taken SessionPreparer::take()
{
    uint64_t count = 0;
    [[maybe_unused]] ssize_t got = read(ready_fd_.get(), &count, sizeof count);
    std::lock_guard lock(mutex_);
    return {std::exchange(progress_, {}), std::exchange(prepared_, {}), std::exchange(turns_, {})};
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
        request.options.turns = this;
        if (request.tuner)
            request.options.stage_choices = request.tuner->choose(
                *request.definition, request.input, [&](const std::string& status) { report(ticket, status); },
                &cancel_working_, this);
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
