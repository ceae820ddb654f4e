#pragma once
// The filesystem side of framecld's two sockets: their directory, a stale file left by
// a daemon that crashed, another daemon still serving the path, and their access
// (mode 0660, group daemon.socket_group).

#include <filesystem>
#include <string>

#include "base/result.hpp"

namespace framecl::ipc {

// Makes `path` ready to bind: creates its directory, refuses if a live daemon
// answers on it (connecting with `socket_type`), and removes a stale socket file.
Result<void> prepareSocketPath(const std::filesystem::path& path, int socket_type);

// Mode 0660 and, when `group` is not empty, that group.
Result<void> setSocketAccess(const std::filesystem::path& path, const std::string& group);

} // namespace framecl::ipc
