#include "service/socket_activation.hpp"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <vector>

#include <fmt/format.h>
#include <systemd/sd-daemon.h>

namespace framecl::service {
namespace {

std::string socketTypeName(int type)
{
    switch (type) {
    case SOCK_STREAM: return "stream";
    case SOCK_SEQPACKET: return "seqpacket";
    case SOCK_DGRAM: return "datagram";
    default: return fmt::format("type {}", type);
    }
}

// What a passed fd is, for the error that refuses it: "a listening Unix stream socket on
// /run/x.sock", "a TCP socket", "not a socket".
std::string describeFd(int fd)
{
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
        return errno == ENOTSOCK ? "not a socket" : fmt::format("unreadable ({})", std::strerror(errno));
    int type = 0, listening = 0;
    socklen_t size = sizeof type;
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size);
    size = sizeof listening;
    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size);
    const std::string what = fmt::format("a {}{} socket", listening ? "listening " : "", socketTypeName(type));
    if (address.ss_family != AF_UNIX)
        return fmt::format("{} of address family {}, not a Unix socket", what, address.ss_family);
    const auto* unix_address = reinterpret_cast<const sockaddr_un*>(&address);
    const bool named = length > offsetof(sockaddr_un, sun_path) && unix_address->sun_path[0] != '\0';
    return named ? fmt::format("{} on {}", what, unix_address->sun_path) : what + " with no path";
}

// Close-on-exec (nothing framecld starts may hold them) and non-blocking (both are
// accepted from the event loop).
Result<void> prepare(int fd)
{
    const int fd_flags = fcntl(fd, F_GETFD);
    const int status_flags = fcntl(fd, F_GETFL);
    if (fd_flags < 0 || status_flags < 0 || fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) != 0 ||
        fcntl(fd, F_SETFL, status_flags | O_NONBLOCK) != 0)
        return fail(fmt::format("socket activation: fd {}: {}", fd, std::strerror(errno)));
    return {};
}

} // namespace

Result<ActivatedSockets> takeActivatedSockets(const std::filesystem::path& control_path,
                                              const std::filesystem::path& buffer_path)
{
    const int count = sd_listen_fds(1);
    if (count < 0)
        return fail(fmt::format("socket activation: $LISTEN_FDS: {}", std::strerror(-count)));
    ActivatedSockets sockets;
    // Owned from the start, so that every one is closed if a later one is refused.
    std::vector<UniqueFd> passed;
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + count; ++fd)
        passed.emplace_back(fd);
    for (UniqueFd& fd : passed) {
        UniqueFd* slot = nullptr;
        if (sd_is_socket_unix(fd.get(), SOCK_STREAM, 1, control_path.c_str(), 0) > 0)
            slot = &sockets.control;
        else if (sd_is_socket_unix(fd.get(), SOCK_SEQPACKET, 1, buffer_path.c_str(), 0) > 0)
            slot = &sockets.buffers;
        if (!slot || slot->valid())
            return fail(fmt::format("socket activation: fd {} is {}, {}; framecld takes a listening stream socket "
                                    "on daemon.socket ({}) and a listening seqpacket socket on "
                                    "daemon.buffer_socket ({}): make the socket unit's paths and the config's agree",
                                    fd.get(), describeFd(fd.get()), slot ? "the second for that path" : "not one of its own",
                                    control_path.string(), buffer_path.string()));
        if (auto ready = prepare(fd.get()); !ready)
            return tl::unexpected(ready.error());
        *slot = std::move(fd);
    }
    return sockets;
}

} // namespace framecl::service
