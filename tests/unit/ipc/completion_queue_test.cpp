// GPU completions handed from the OpenCL runtime's callback thread to the event loop
// (ipc::CompletionQueue), with user events on PoCL standing in for a frame's last
// command: the loop is woken once per completion, and a callback that comes after the
// queue is gone (a daemon torn down with frames on the GPU) finds its state alive.
#include <cerrno>
#include <chrono>
#include <thread>

#include <fcntl.h>
#include <poll.h>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "ipc/completion_queue.hpp"

using namespace framecl;
using namespace std::chrono_literals;

namespace {

bool readable(int fd, std::chrono::milliseconds timeout)
{
    pollfd entry{fd, POLLIN, 0};
    return poll(&entry, 1, int(timeout.count())) == 1;
}

bool isOpen(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

} // namespace

TEST_CASE("a completion wakes the queue's fd and is taken once, with the frame and its status")
{
    auto gpu = test::openTestGpu();
    cl_int err = CL_SUCCESS;
    cl::UserEvent event(gpu->context(), &err);
    REQUIRE(err == CL_SUCCESS);
    ipc::CompletionQueue queue;
    REQUIRE(queue.notifyOnCompletion(event(), 7));
    CHECK_FALSE(readable(queue.fd(), 50ms));

    REQUIRE(event.setStatus(CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(readable(queue.fd(), 2000ms));
    const auto taken = queue.take();
    REQUIRE(taken.size() == 1);
    CHECK(taken[0].frame == 7);
    CHECK(taken[0].execution_status == CL_COMPLETE);
    CHECK(queue.take().empty());
    CHECK_FALSE(readable(queue.fd(), 0ms));
}

TEST_CASE("a callback that comes after the queue is destroyed finds what it writes to still there")
{
    auto gpu = test::openTestGpu();
    cl_int err = CL_SUCCESS;
    cl::UserEvent event(gpu->context(), &err);
    REQUIRE(err == CL_SUCCESS);
    int event_fd = -1;
    {
        ipc::CompletionQueue queue;
        event_fd = queue.fd();
        REQUIRE(queue.notifyOnCompletion(event(), 9));
    }
    // The pending callback holds the queue's state, its eventfd included.
    CHECK(isOpen(event_fd));

    REQUIRE(event.setStatus(CL_COMPLETE) == CL_SUCCESS);
    // The callback ran (on a runtime thread), wrote, and let the state go with it.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (isOpen(event_fd) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    CHECK_FALSE(isOpen(event_fd));
}
