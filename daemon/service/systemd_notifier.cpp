#include "service/systemd_notifier.hpp"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include <systemd/sd-daemon.h>

#include "base/log.hpp"

namespace framecl::service {

SystemdNotifier::SystemdNotifier()
{
    const char* socket = std::getenv("NOTIFY_SOCKET");
    enabled_ = socket && *socket;

    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
        watchdog_interval_ = std::chrono::microseconds(usec / 2);
}

void SystemdNotifier::send(std::string_view message)
{
    if (!enabled_)
        return;
    const std::string text(message);
    const int r = sd_notify(0, text.c_str());
    if (r < 0)
        log::get("daemon")->warn("sd_notify(\"{}\") failed: {}", text, std::strerror(-r));
}

void SystemdNotifier::ready(std::string_view status)
{
    send(std::string("READY=1\nSTATUS=") + std::string(status));
}

void SystemdNotifier::status(std::string_view status)
{
    send(std::string("STATUS=") + std::string(status));
}

void SystemdNotifier::reloading()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint64_t usec = uint64_t(now.tv_sec) * 1000000u + uint64_t(now.tv_nsec) / 1000u;
    send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::stopping()
{
    send("STOPPING=1");
}

void SystemdNotifier::watchdog()
{
    send("WATCHDOG=1");
}

} // namespace framecl::service
