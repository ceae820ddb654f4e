#pragma once
// The systemd notify protocol (sd_notify(3)): framecld tells its service manager when
// it is ready, reloading or stopping, and pets the watchdog. Without $NOTIFY_SOCKET
// every call is a no-op, so the daemon runs the same outside systemd.

#include <chrono>
#include <optional>
#include <string_view>

namespace framecl::service {

class SystemdNotifier {
public:
    SystemdNotifier();

    // True when $NOTIFY_SOCKET names a socket to talk to.
    bool enabled() const { return enabled_; }

    // How often to send WATCHDOG=1: half of $WATCHDOG_USEC (when $WATCHDOG_PID, if
    // set, is us), as sd_watchdog_enabled(3) recommends. Empty: no watchdog.
    std::optional<std::chrono::microseconds> watchdogInterval() const { return watchdog_interval_; }

    void ready(std::string_view status);
    void status(std::string_view status);
    // RELOADING=1 with MONOTONIC_USEC, which Type=notify-reload units require.
    void reloading();
    void stopping();
    void watchdog();

private:
    void send(std::string_view message);

    bool enabled_ = false;
    std::optional<std::chrono::microseconds> watchdog_interval_;
};

} // namespace framecl::service
