#include "service/service_loop.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/log.hpp"

namespace framecl::service {
namespace {

sigset_t handledSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return set;
}

[[noreturn]] void fatal(const char* call)
{
    throw std::runtime_error(std::string(call) + " failed: " + std::strerror(errno));
}

} // namespace

ServiceLoop::ServiceLoop(SystemdNotifier& notifier) : notifier_(notifier)
{
    const sigset_t set = handledSignals();
    if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0)
        fatal("pthread_sigmask");
    // A client that dies mid-write must not kill the daemon with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);

    epoll_fd_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_fd_.valid())
        fatal("epoll_create1");
    signal_fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_.valid())
        fatal("signalfd");

    if (auto interval = notifier_.watchdogInterval()) {
        watchdog_fd_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
        if (!watchdog_fd_.valid())
            fatal("timerfd_create");
        const auto usec = interval->count();
        itimerspec spec{};
        spec.it_interval.tv_sec = usec / 1000000;
        spec.it_interval.tv_nsec = (usec % 1000000) * 1000;
        spec.it_value = spec.it_interval;
        if (timerfd_settime(watchdog_fd_.get(), 0, &spec, nullptr) != 0)
            fatal("timerfd_settime");
        log::get("daemon")->info("watchdog: WATCHDOG=1 every {} ms", usec / 1000);
        watch(watchdog_fd_.get(), [this] {
            uint64_t expirations = 0;
            if (read(watchdog_fd_.get(), &expirations, sizeof expirations) == sizeof expirations)
                notifier_.watchdog();
        });
    }
}

void ServiceLoop::watch(int fd, std::function<void()> on_readable)
{
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0)
        fatal("epoll_ctl(EPOLL_CTL_ADD)");
    handlers_[fd] = std::make_shared<std::function<void()>>(std::move(on_readable));
}

void ServiceLoop::unwatch(int fd)
{
    if (handlers_.erase(fd))
        epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

void ServiceLoop::onSignal(const std::function<std::string()>& reload)
{
    signalfd_siginfo info{};
    while (read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
        const int signo = int(info.ssi_signo);
        if (signo == SIGHUP) {
            log::get("daemon")->info("SIGHUP: reloading the configuration");
            notifier_.reloading();
            notifier_.ready(reload());
            continue;
        }
        log::get("daemon")->info("{}: stopping", strsignal(signo));
        notifier_.stopping();
        stopping_ = true;
        return;
    }
}

void ServiceLoop::stop(int exit_status, const std::string& why)
{
    notifier_.status(why);
    notifier_.stopping();
    exit_status_ = exit_status;
    stopping_ = true;
}

int ServiceLoop::run(const std::function<std::string()>& reload)
{
    stopping_ = false;
    exit_status_ = 0;
    watch(signal_fd_.get(), [this, &reload] { onSignal(reload); });
    epoll_event events[32];
    while (!stopping_) {
        const int count = epoll_wait(epoll_fd_.get(), events, 32, -1);
        if (count < 0) {
            if (errno == EINTR)
                continue;
            fatal("epoll_wait");
        }
        for (int i = 0; i < count && !stopping_; ++i) {
            // Looked up per event: an earlier handler of this batch may have unwatched it.
            const int fd = events[i].data.fd;
            auto it = handlers_.find(fd);
            if (it == handlers_.end())
                continue;
            const auto handler = it->second; // keeps it alive if it unwatches itself
            // A handler that throws fails the request it was handling, not the loop and
            // every other client with it (docs/architecture.md, "Errors, logs and
            // ownership").
            try {
                (*handler)();
            } catch (const std::exception& e) {
                log::get("service")->error("the handler of fd {} failed: {}; serving on", fd, e.what());
            } catch (...) {
                log::get("service")->error("the handler of fd {} failed with an unknown exception; serving on", fd);
            }
        }
    }
    unwatch(signal_fd_.get());
    return exit_status_;
}

} // namespace framecl::service
