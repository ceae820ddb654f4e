// The kernel's word on a sync_file (memory/sync_file.hpp). A fence that signals with an
// error cannot be made here: the guest's kernel has no SW_SYNC, and vgem's fences expire
// without one; the status it would carry is mapped here, and the frame it fails ends as
// a timed-out one does (tests/vm/fence_test.cpp).
#include <doctest/doctest.h>

#include <cerrno>

#include <sys/socket.h>

#include "memory/sync_file.hpp"

using framecl::memory::FenceState;
using framecl::memory::fenceStateOf;

TEST_CASE("sync_file_info.status: 1 signalled, 0 pending, a negative errno failed with that error")
{
    CHECK(fenceStateOf(1).kind == FenceState::Kind::Signalled);
    CHECK(fenceStateOf(0).kind == FenceState::Kind::Pending);
    const FenceState failed = fenceStateOf(-ETIMEDOUT);
    CHECK(failed.kind == FenceState::Kind::Failed);
    CHECK(failed.error == "Connection timed out");
    CHECK(fenceStateOf(-EIO).error == "Input/output error");
}

TEST_CASE("an fd that is no sync_file is refused by name")
{
    int pair[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    const framecl::UniqueFd a(pair[0]), b(pair[1]);
    const auto state = framecl::memory::syncFileState(a.get());
    REQUIRE_FALSE(state);
    CHECK(state.error().message.rfind("not a sync_file (", 0) == 0);
}
