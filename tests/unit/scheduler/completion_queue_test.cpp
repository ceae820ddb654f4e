// GPU completions handed from the queue's waiting thread to the event loop
// (scheduler::CompletionQueue), with user events on PoCL standing in for a frame's last
// command: the loop is woken once per completion, in the order the frames were
// watched on each lane (the lanes each on their own), and a completion that comes after the queue is gone (a daemon torn down with
// frames on the GPU) finds the state it writes to alive.
#include <cerrno>
#include <chrono>
#include <thread>

#include <fcntl.h>
#include <poll.h>

#include <doctest/doctest.h>

#include "gpu_test_support.hpp"
#include "scheduler/completion_queue.hpp"

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
    scheduler::CompletionQueue queue;
    queue.notifyOnCompletion(event, 7);
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

TEST_CASE("a completion that comes after the queue is destroyed finds what it writes to still there")
{
    auto gpu = test::openTestGpu();
    cl_int err = CL_SUCCESS;
    cl::UserEvent event(gpu->context(), &err);
    REQUIRE(err == CL_SUCCESS);
    int event_fd = -1;
    {
        scheduler::CompletionQueue queue;
        event_fd = queue.fd();
        queue.notifyOnCompletion(event, 9);
    }
    // The thread waiting for the event holds the queue's state, its eventfd included.
    CHECK(isOpen(event_fd));

    REQUIRE(event.setStatus(CL_COMPLETE) == CL_SUCCESS);
    // The thread saw it complete, wrote, and let the state go as it ended.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (isOpen(event_fd) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    CHECK_FALSE(isOpen(event_fd));
}

TEST_CASE("frames are reported in the order they were watched, failed ones with their status")
{
    auto gpu = test::openTestGpu();
    cl_int err = CL_SUCCESS;
    cl::UserEvent first(gpu->context(), &err), second(gpu->context(), &err);
    REQUIRE(err == CL_SUCCESS);
    scheduler::CompletionQueue queue;
    queue.notifyOnCompletion(first, 1);
    queue.notifyOnCompletion(second, 2);
    REQUIRE(second.setStatus(CL_COMPLETE) == CL_SUCCESS);
    CHECK_FALSE(readable(queue.fd(), 50ms)); // the first is still on the GPU
    REQUIRE(first.setStatus(CL_OUT_OF_RESOURCES) == CL_SUCCESS);
    std::vector<scheduler::Completion> taken;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (taken.size() < 2 && std::chrono::steady_clock::now() < deadline)
        if (readable(queue.fd(), 100ms))
            for (const auto& completion : queue.take())
                taken.push_back(completion);
    REQUIRE(taken.size() == 2);
    CHECK(taken[0].frame == 1);
    CHECK(taken[0].execution_status == CL_OUT_OF_RESOURCES);
    CHECK(taken[1].frame == 2);
    CHECK(taken[1].execution_status == CL_COMPLETE);
    CHECK(taken[0].callback_ns <= taken[1].callback_ns);
}

TEST_CASE("each lane is watched on its own: a completion on one is not held behind a wait on the other")
{
    auto gpu = test::openTestGpu();
    cl_int err = CL_SUCCESS;
    cl::UserEvent slow(gpu->context(), &err), quick(gpu->context(), &err);
    REQUIRE(err == CL_SUCCESS);
    scheduler::CompletionQueue queue(2);
    queue.notifyOnCompletion(slow, 1, 0);
    queue.notifyOnCompletion(quick, 2, 1);

    REQUIRE(quick.setStatus(CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(readable(queue.fd(), 2000ms));
    auto taken = queue.take();
    REQUIRE(taken.size() == 1);
    CHECK(taken[0].frame == 2);

    REQUIRE(slow.setStatus(CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(readable(queue.fd(), 2000ms));
    taken = queue.take();
    REQUIRE(taken.size() == 1);
    CHECK(taken[0].frame == 1);
}
