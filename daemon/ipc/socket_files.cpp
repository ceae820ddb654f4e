#include "ipc/socket_files.hpp"

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/unique_fd.hpp"

namespace framecl::ipc {

namespace fs = std::filesystem;

Result<void> prepareSocketPath(const fs::path& path, int socket_type)
{
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
        return fail(fmt::format("{}: cannot create the socket directory: {}", path.parent_path().string(), ec.message()));

    struct stat st {};
    if (lstat(path.c_str(), &st) != 0)
        return {}; // nothing there
    if (!S_ISSOCK(st.st_mode))
        return fail(fmt::format("{} exists and is not a socket; refusing to replace it", path.string()));

    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    UniqueFd probe(socket(AF_UNIX, socket_type | SOCK_CLOEXEC, 0));
    if (probe.valid() && connect(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
        return fail(fmt::format("another framecld is already serving {}", path.string()));
    if (unlink(path.c_str()) != 0 && errno != ENOENT)
        return fail(fmt::format("{}: cannot remove the stale socket: {}", path.string(), std::strerror(errno)));
    return {};
}

Result<void> setSocketAccess(const fs::path& path, const std::string& group)
{
    if (!group.empty()) {
        const struct group* entry = getgrnam(group.c_str());
        if (!entry)
            return fail(fmt::format("daemon.socket_group: no group named '{}'", group));
        if (chown(path.c_str(), uid_t(-1), entry->gr_gid) != 0)
            return fail(fmt::format("{}: cannot give the socket to group '{}': {}", path.string(), group,
                                    std::strerror(errno)));
    }
    if (chmod(path.c_str(), 0660) != 0)
        return fail(fmt::format("{}: chmod 0660: {}", path.string(), std::strerror(errno)));
    return {};
}

Result<BoundSocketFile> identifyBoundSocket(const fs::path& path)
{
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0)
        return fail(fmt::format("{}: cannot stat the socket just bound: {}", path.string(), std::strerror(errno)));
    return BoundSocketFile{path, st.st_dev, st.st_ino};
}

void removeBoundSocket(const BoundSocketFile& bound)
{
    struct stat st {};
    if (lstat(bound.path.c_str(), &st) == 0 && st.st_dev == bound.device && st.st_ino == bound.inode)
        unlink(bound.path.c_str());
}

} // namespace framecl::ipc
