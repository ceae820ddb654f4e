#include "service/service_loop.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

#include <poll.h>
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
    signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
    if (signal_fd_ < 0)
        fatal("signalfd");

    if (auto interval = notifier_.watchdogInterval()) {
        watchdog_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (watchdog_fd_ < 0)
            fatal("timerfd_create");
        const auto usec = interval->count();
        itimerspec spec{};
        spec.it_interval.tv_sec = usec / 1000000;
        spec.it_interval.tv_nsec = (usec % 1000000) * 1000;
        spec.it_value = spec.it_interval;
        if (timerfd_settime(watchdog_fd_, 0, &spec, nullptr) != 0)
            fatal("timerfd_settime");
        log::get("daemon")->info("watchdog: WATCHDOG=1 every {} ms", usec / 1000);
    }
}

ServiceLoop::~ServiceLoop()
{
    if (watchdog_fd_ >= 0)
        close(watchdog_fd_);
    close(signal_fd_);
}

int ServiceLoop::run(const std::function<std::string()>& reload)
{
    auto logger = log::get("daemon");
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {watchdog_fd_, POLLIN, 0}};
    const nfds_t nfds = watchdog_fd_ >= 0 ? 2 : 1;

    for (;;) {
        if (poll(fds, nfds, -1) < 0) {
            if (errno == EINTR)
                continue;
            fatal("poll");
        }

        if (nfds == 2 && (fds[1].revents & POLLIN)) {
            uint64_t expirations = 0;
            if (read(watchdog_fd_, &expirations, sizeof expirations) == sizeof expirations)
                notifier_.watchdog();
        }

        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info{};
            if (read(signal_fd_, &info, sizeof info) != sizeof info)
                continue;
            const int signo = int(info.ssi_signo);
            if (signo == SIGHUP) {
                logger->info("SIGHUP: reloading the configuration");
                notifier_.reloading();
                notifier_.ready(reload());
                continue;
            }
            logger->info("{}: stopping", strsignal(signo));
            notifier_.stopping();
            return signo;
        }
    }
}

} // namespace framecl::service
