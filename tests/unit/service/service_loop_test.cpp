// The event loop goes on when a handler throws: the failure is logged, and the other
// fds' handlers, the same fd's next event and a stop still run.
#include <stdexcept>

#include <doctest/doctest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/unique_fd.hpp"
#include "service/service_loop.hpp"
#include "service/systemd_notifier.hpp"

using namespace framecl;

namespace {

void wake(const UniqueFd& fd)
{
    const uint64_t one = 1;
    REQUIRE(write(fd.get(), &one, sizeof one) == sizeof one);
}

void consume(const UniqueFd& fd)
{
    uint64_t count = 0;
    REQUIRE(read(fd.get(), &count, sizeof count) == sizeof count);
}

} // namespace

TEST_CASE("a handler that throws is logged and the loop keeps serving every fd")
{
    service::SystemdNotifier notifier; // no NOTIFY_SOCKET: silent
    service::ServiceLoop loop(notifier);
    UniqueFd failing(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), other(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    int failures = 0, others = 0;
    loop.watch(failing.get(), [&] {
        consume(failing);
        if (++failures == 1)
            throw std::runtime_error("a request the handler could not take");
        wake(other); // the second event of the same fd ran too
    });
    loop.watch(other.get(), [&] {
        consume(other);
        if (++others == 1)
            wake(failing);
        else
            loop.stop(0, "done");
    });
    wake(failing); // throws; then `other`, `failing` again, `other` again, which stops
    wake(other);
    CHECK(loop.run([] { return std::string(); }) == 0);
    CHECK(failures == 2);
    CHECK(others == 2);
}
