#include "memory/sync_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>

#include <fmt/format.h>

namespace framecl::memory {

FenceState fenceStateOf(int32_t status)
{
    if (status > 0)
        return {FenceState::Kind::Signalled, {}};
    if (status == 0)
        return {FenceState::Kind::Pending, {}};
    return {FenceState::Kind::Failed, std::strerror(-status)};
}

Result<FenceState> syncFileState(int fd)
{
    sync_file_info info{};
    if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) != 0)
        return fail(fmt::format("not a sync_file ({})", std::strerror(errno)));
    return fenceStateOf(info.status);
}

Result<std::optional<UniqueFd>> exportDmaBufFences(int fd, bool write)
{
    dma_buf_export_sync_file request{};
    request.flags = write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ;
    request.fd = -1;
    int err = 0;
    do {
        err = ioctl(fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &request) == 0 ? 0 : errno;
    } while (err == EINTR);
    if (err == ENOTTY)
        return std::nullopt;
    if (err)
        return fail(fmt::format("DMA_BUF_IOCTL_EXPORT_SYNC_FILE: {}", std::strerror(err)));
    return std::optional(UniqueFd(request.fd));
}

std::string implicitSyncUnavailable()
{
    utsname name{};
    unsigned major = 0;
    if (uname(&name) != 0 || std::sscanf(name.release, "%u", &major) != 1)
        return "the kernel's release could not be read";
    if (major >= 6)
        return {};
    return fmt::format("Linux {} has no DMA_BUF_IOCTL_EXPORT_SYNC_FILE (6.0 added it)", name.release);
}

} // namespace framecl::memory
