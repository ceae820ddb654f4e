#pragma once
// A datagram socket standing in for systemd's notify socket: the test owns it, points
// $NOTIFY_SOCKET at it and reads what the daemon sends.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace framecl::test {

class NotifySocket {
public:
    explicit NotifySocket(const std::filesystem::path& path);
    ~NotifySocket();
    NotifySocket(const NotifySocket&) = delete;
    NotifySocket& operator=(const NotifySocket&) = delete;

    const std::filesystem::path& path() const { return path_; }

    // The next datagram, or nothing if none arrives within `timeout`.
    std::optional<std::string> receive(std::chrono::milliseconds timeout);

    // Datagrams until one contains `needle` (returned) or `timeout` passes.
    std::optional<std::string> waitFor(const std::string& needle, std::chrono::milliseconds timeout);

private:
    std::filesystem::path path_;
    int fd_ = -1;
};

} // namespace framecl::test
