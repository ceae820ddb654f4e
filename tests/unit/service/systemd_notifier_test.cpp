#include <cstdlib>
#include <string>

#include <doctest/doctest.h>
#include <unistd.h>

#include "notify_socket.hpp"
#include "service/systemd_notifier.hpp"
#include "temp_dir.hpp"

using framecl::service::SystemdNotifier;
using namespace std::chrono_literals;

namespace {

// Points the notify protocol's environment at a test socket for one test case.
struct NotifyEnvironment {
    framecl::test::TempDir dir;
    framecl::test::NotifySocket socket{dir / "notify.sock"};

    NotifyEnvironment()
    {
        setenv("NOTIFY_SOCKET", socket.path().c_str(), 1);
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
    }
    ~NotifyEnvironment()
    {
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
    }
};

} // namespace

TEST_CASE("ready sends READY=1 with the status text")
{
    NotifyEnvironment env;
    SystemdNotifier notifier;
    REQUIRE(notifier.enabled());
    notifier.ready("2 pipelines on PoCL");
    CHECK(env.socket.receive(1s) == "READY=1\nSTATUS=2 pipelines on PoCL");
}

TEST_CASE("reloading sends RELOADING=1 with the monotonic time")
{
    NotifyEnvironment env;
    SystemdNotifier notifier;
    timespec before{};
    clock_gettime(CLOCK_MONOTONIC, &before);
    notifier.reloading();
    const auto message = env.socket.receive(1s);
    REQUIRE(message);
    REQUIRE(message->rfind("RELOADING=1\nMONOTONIC_USEC=", 0) == 0);
    const uint64_t usec = std::stoull(message->substr(message->find('=', 12) + 1));
    CHECK(usec >= uint64_t(before.tv_sec) * 1000000u);
}

TEST_CASE("stopping, status and watchdog send their messages")
{
    NotifyEnvironment env;
    SystemdNotifier notifier;
    notifier.status("busy");
    notifier.watchdog();
    notifier.stopping();
    CHECK(env.socket.receive(1s) == "STATUS=busy");
    CHECK(env.socket.receive(1s) == "WATCHDOG=1");
    CHECK(env.socket.receive(1s) == "STOPPING=1");
}

TEST_CASE("the watchdog interval is half of WATCHDOG_USEC")
{
    NotifyEnvironment env;
    setenv("WATCHDOG_USEC", "3000000", 1);
    setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
    SystemdNotifier notifier;
    REQUIRE(notifier.watchdogInterval());
    CHECK(notifier.watchdogInterval()->count() == 1500000);
}

TEST_CASE("a watchdog meant for another process is ignored")
{
    NotifyEnvironment env;
    setenv("WATCHDOG_USEC", "3000000", 1);
    setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
    SystemdNotifier notifier;
    CHECK_FALSE(notifier.watchdogInterval());
}

TEST_CASE("without NOTIFY_SOCKET the notifier is silent")
{
    unsetenv("NOTIFY_SOCKET");
    SystemdNotifier notifier;
    CHECK_FALSE(notifier.enabled());
    notifier.ready("nobody listens"); // must not fail or block
}
