#pragma once
// The filesystem side of framecld's two sockets: their directory, a stale file left by
// a daemon that crashed, another daemon still serving the path, and their access
// (mode 0660, group daemon.socket_group).

#include <filesystem>
#include <string>

#include <sys/types.h>

#include "base/result.hpp"

namespace framecl::ipc {

// Makes `path` ready to bind: creates its directory, refuses if a live daemon
// answers on it (connecting with `socket_type`), and removes a stale socket file.
Result<void> prepareSocketPath(const std::filesystem::path& path, int socket_type);

// Mode 0660 and, when `group` is not empty, that group.
Result<void> setSocketAccess(const std::filesystem::path& path, const std::string& group);

// A socket file this process bound: which file it is, not only where.
struct BoundSocketFile {
    std::filesystem::path path;
    dev_t device = 0;
    ino_t inode = 0;
};

// The file at `path`, just bound by this process.
Result<BoundSocketFile> identifyBoundSocket(const std::filesystem::path& path);

// Removes `bound` if the file at its path is still the one this process bound: a
// daemon that failed to start must not remove the sockets of the one already
// serving, nor a daemon that stops those of one started since.
void removeBoundSocket(const BoundSocketFile& bound);

} // namespace framecl::ipc
