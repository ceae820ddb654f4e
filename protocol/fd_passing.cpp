#include "fd_passing.hpp"

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/socket.h>

namespace framecl::protocol {

int sendPacketOnce(int socket, std::span<const uint8_t> bytes, std::span<const int> fds, int flags)
{
    if (fds.size() > max_fds_per_packet)
        return -E2BIG;

    iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;

    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_fds_per_packet)];
    if (!fds.empty()) {
        message.msg_control = control;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
    }

    ssize_t sent;
    do
        sent = sendmsg(socket, &message, MSG_NOSIGNAL | flags);
    while (sent < 0 && errno == EINTR);
    return sent < 0 ? -errno : 0;
}

Result<void> sendPacket(int socket, std::span<const uint8_t> bytes, std::span<const int> fds)
{
    if (fds.size() > max_fds_per_packet)
        return fail(fmt::format("{} fds in one packet; at most {}", fds.size(), max_fds_per_packet));
    if (const int err = sendPacketOnce(socket, bytes, fds, 0); err < 0)
        return fail(fmt::format("sendmsg: {}", std::strerror(-err)));
    return {};
}

Result<Packet> receivePacket(int socket)
{
    // Every frame's Submit and Done pass through here: read into one buffer per thread
    // and copy out the packet's length, rather than zero a fresh 64 KiB each time.
    thread_local std::array<uint8_t, max_packet_bytes> scratch;
    Packet packet;
    iovec iov{scratch.data(), scratch.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_fds_per_packet)];
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;

    ssize_t received;
    do
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    while (received < 0 && errno == EINTR);
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        packet.none = true; // a wake-up with nothing behind it is not a broken connection
        return packet;
    }
    if (received < 0)
        return fail(fmt::format("recvmsg: {}", std::strerror(errno)));

    // Take ownership of every fd first, so that none leaks on the error paths below.
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS)
            continue;
        const size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
            packet.fds.emplace_back(fd);
        }
    }

    if (message.msg_flags & MSG_TRUNC)
        return fail(fmt::format("packet longer than {} bytes", max_packet_bytes));
    if (message.msg_flags & MSG_CTRUNC) {
        // The kernel sets it both when the control buffer had no room for every fd and
        // when it could not install one in this process's table (scm_detach_fds): a
        // buffer left with room means the latter.
        packet.fds_lost = packet.fds.size() < max_fds_per_packet
                              ? "no file descriptor left: framecld is at its RLIMIT_NOFILE, and the fds sent with "
                                "this packet did not arrive (see limits.max_clients and LimitNOFILE=)"
                              : fmt::format("more than {} fds in one packet", max_fds_per_packet);
        packet.fds.clear();
    }
    if (received == 0 && packet.fds.empty()) {
        packet.closed = true;
        return packet;
    }
    packet.bytes.assign(scratch.begin(), scratch.begin() + received);
    return packet;
}

} // namespace framecl::protocol
