#include "write_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "unique_fd.hpp"

namespace framecl {
namespace {

bool writeAll(int fd, std::string_view bytes)
{
    while (!bytes.empty()) {
        const ssize_t written = ::write(fd, bytes.data(), bytes.size());
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return false;
        bytes.remove_prefix(static_cast<size_t>(written));
    }
    return true;
}

} // namespace

Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view bytes)
{
    std::string temp = path.string() + ".tmp.XXXXXX";
    UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
    if (fd.get() < 0)
        return fail("cannot create a file in '" + path.parent_path().string() + "': " + std::strerror(errno));
    // Each step runs only if the previous one succeeded, so errno is the failing one's.
    if (!writeAll(fd.get(), bytes) || ::fsync(fd.get()) != 0 || !fd.close() ||
        std::rename(temp.c_str(), path.c_str()) != 0) {
        const int failure = errno;
        ::unlink(temp.c_str());
        return fail("cannot write '" + path.string() + "': " + std::strerror(failure));
    }
    // The rename itself lives in the directory; sync it so the file survives power loss.
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    UniqueFd directory(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (directory.get() >= 0)
        ::fsync(directory.get());
    return {};
}

} // namespace framecl
