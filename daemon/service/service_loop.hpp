#pragma once
// The daemon's one event loop (epoll): signals through a signalfd, the watchdog timer,
// and the fds components register (the ZeroMQ socket, the buffer socket, GPU
// completions). SIGTERM and SIGINT end it; SIGHUP asks the owner to reload. Signals
// are blocked and read from the signalfd, so every handler runs on the main thread
// with no async-signal-safety limits.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/unique_fd.hpp"
#include "service/systemd_notifier.hpp"

namespace framecl::service {

class ServiceLoop {
public:
    // Blocks SIGTERM, SIGINT and SIGHUP for the calling thread and every thread it
    // starts afterwards: construct it before any other thread exists.
    explicit ServiceLoop(SystemdNotifier& notifier);

    ServiceLoop(const ServiceLoop&) = delete;
    ServiceLoop& operator=(const ServiceLoop&) = delete;

    // Calls `on_readable` on the loop's thread whenever `fd` is readable (level
    // triggered), until unwatch(fd). A handler may watch and unwatch fds, itself too.
    void watch(int fd, std::function<void()> on_readable);
    void unwatch(int fd);

    // Runs until SIGTERM or SIGINT, or until a handler calls stop(). `reload` runs on
    // SIGHUP between RELOADING=1 and READY=1 and returns the status text to announce.
    // Returns the daemon's exit status: 0 after a signal, or what stop() was given.
    int run(const std::function<std::string()>& reload);

    // Ends the loop once the running handler returns, for the daemon to exit with
    // `exit_status` (not 0: the service manager restarts it, framecld.service's
    // Restart=on-failure); `why` goes to the service manager as its STATUS.
    void stop(int exit_status, const std::string& why);

private:
    void onSignal(const std::function<std::string()>& reload);

    SystemdNotifier& notifier_;
    UniqueFd epoll_fd_;
    UniqueFd signal_fd_;
    UniqueFd watchdog_fd_;
    std::map<int, std::shared_ptr<std::function<void()>>> handlers_;
    bool stopping_ = false;
    int exit_status_ = 0;
};

} // namespace framecl::service
