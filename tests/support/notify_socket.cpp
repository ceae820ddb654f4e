#include "notify_socket.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace framecl::test {

NotifySocket::NotifySocket(const std::filesystem::path& path) : path_(path)
{
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (fd_ < 0 || path.native().size() >= sizeof address.sun_path)
        throw std::runtime_error("notify socket: cannot create " + path.string());
    std::strcpy(address.sun_path, path.c_str());
    unlink(path.c_str());
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        throw std::runtime_error("notify socket: bind " + path.string() + ": " + std::strerror(errno));
}

NotifySocket::~NotifySocket()
{
    close(fd_);
    unlink(path_.c_str());
}

std::optional<std::string> NotifySocket::receive(std::chrono::milliseconds timeout)
{
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, int(timeout.count())) != 1)
        return std::nullopt;
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n < 0)
        return std::nullopt;
    return std::string(buffer, size_t(n));
}

std::optional<std::string> NotifySocket::waitFor(const std::string& needle, std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return std::nullopt;
        auto message = receive(left);
        if (message && message->find(needle) != std::string::npos)
            return message;
    }
}

} // namespace framecl::test
