// Packets on a SOCK_SEQPACKET pair (protocol/fd_passing.hpp): what receivePacket
// reports for a wake-up with nothing behind it, a closed peer, and a packet with fds.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "base/unique_fd.hpp"
#include "fd_passing.hpp"

using namespace framecl;

namespace {

std::pair<UniqueFd, UniqueFd> nonBlockingPair()
{
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

} // namespace

TEST_CASE("nothing to read on a non-blocking socket is no packet, not an error")
{
    auto [ours, theirs] = nonBlockingPair();
    auto packet = protocol::receivePacket(ours.get());
    REQUIRE_MESSAGE(packet.has_value(), (packet ? "" : packet.error().message));
    CHECK(packet->none);
    CHECK_FALSE(packet->closed);
    CHECK(packet->bytes.empty());
}

TEST_CASE("a peer that closed is reported as closed")
{
    auto [ours, theirs] = nonBlockingPair();
    theirs.reset();
    auto packet = protocol::receivePacket(ours.get());
    REQUIRE(packet.has_value());
    CHECK(packet->closed);
    CHECK_FALSE(packet->none);
}

TEST_CASE("a packet arrives whole with its fds")
{
    auto [ours, theirs] = nonBlockingPair();
    const UniqueFd passed(open("/dev/null", O_RDONLY | O_CLOEXEC));
    const uint8_t bytes[] = {1, 2, 3};
    const int fds[] = {passed.get()};
    REQUIRE(protocol::sendPacket(theirs.get(), bytes, fds));
    auto packet = protocol::receivePacket(ours.get());
    REQUIRE(packet.has_value());
    CHECK_FALSE(packet->none);
    CHECK(packet->bytes == std::vector<uint8_t>{1, 2, 3});
    REQUIRE(packet->fds.size() == 1);
    CHECK(fcntl(packet->fds[0].get(), F_GETFD) != -1);
}
