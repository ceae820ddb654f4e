#pragma once
// Fences as the kernel hands them to user space: a sync_file fd, readable once every
// fence in it has signalled (docs/architecture.md, "Fences"). What a frame waits for
// before the GPU touches its buffers: the fences already on an imported dma-buf
// (implicit sync, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, Linux 6.0) and the acquire fence a
// Submit may carry (explicit sync).

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::memory {

// What a sync_file's fences have come to.
struct FenceState {
    enum class Kind { Pending, Signalled, Failed } kind;
    std::string error; // Failed: the fence's error, e.g. "Connection timed out"
};

// What sync_file_info.status says: 1 signalled, 0 pending, a negative errno for a
// fence that signalled with that error.
FenceState fenceStateOf(int32_t status);

// SYNC_IOC_FILE_INFO on `fd`; an error where `fd` is no sync_file.
Result<FenceState> syncFileState(int fd);

// The fences on dma-buf `fd` a use must wait for: the writers' for a read, the
// readers' and the writers' for a write (`write`), as one sync_file; none where the
// kernel lacks the ioctl (ENOTTY before Linux 6.0).
Result<std::optional<UniqueFd>> exportDmaBufFences(int fd, bool write);

// Whether this kernel can export a dma-buf's fences, from its release (uname): a
// daemon says at start what protects a frame's buffers (docs/architecture.md, "Fences").
// Empty when it can; otherwise why not.
std::string implicitSyncUnavailable();

} // namespace framecl::memory
