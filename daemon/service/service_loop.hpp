#pragma once
// The daemon's main loop: waits on a signalfd and the watchdog timer. SIGTERM and
// SIGINT end it; SIGHUP asks the owner to reload. Signals are blocked and read from
// the signalfd, so handlers run on the main thread with no async-signal-safety limits.

#include <functional>

#include "service/systemd_notifier.hpp"

namespace framecl::service {

class ServiceLoop {
public:
    // Blocks SIGTERM, SIGINT and SIGHUP for the calling thread and every thread it
    // starts afterwards: construct it before any other thread exists.
    explicit ServiceLoop(SystemdNotifier& notifier);
    ~ServiceLoop();

    ServiceLoop(const ServiceLoop&) = delete;
    ServiceLoop& operator=(const ServiceLoop&) = delete;

    // Runs until SIGTERM or SIGINT. `reload` runs on SIGHUP between RELOADING=1 and
    // READY=1 and returns the status text to announce. Returns the signal that ended
    // the loop.
    int run(const std::function<std::string()>& reload);

private:
    SystemdNotifier& notifier_;
    int signal_fd_ = -1;
    int watchdog_fd_ = -1;
};

} // namespace framecl::service
