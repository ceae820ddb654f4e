// The buffer checks of docs/protocol.md ("Buffer checks"), run on every fd a client
// registers before any import is tried (docs/architecture.md, "Memory").
#include "memory/imported_buffer.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/utf8_text.hpp"

namespace framecl::memory {
namespace {

// "'XR24' (0x34325258)": DRM fourccs are four characters, but a client may send any
// number; the hex code is always there.
std::string fourccText(uint32_t fourcc)
{
    std::string text;
    for (int shift = 0; shift < 32; shift += 8) {
        const char c = char((fourcc >> shift) & 0xff);
        if (c < 0x20 || c > 0x7e)
            return fmt::format("{:#010x}", fourcc);
        text += c;
    }
    return fmt::format("'{}' ({:#010x})", text, fourcc);
}

// "NV12 640x480"; only for a known format.
std::string frameText(const framecl_frame_layout& layout)
{
    return fmt::format("{} {}x{}", framecl_format_name(layout.fourcc), layout.width, layout.height);
}

// framecl_layout_problem() says what is wrong in static text; this adds the numbers
// and the plane, by checking again in the same order.
std::string describeLayoutProblem(const framecl_frame_layout& layout, const char* problem)
{
    if (!framecl_format_name(layout.fourcc))
        return fmt::format("fourcc {}: {}", fourccText(layout.fourcc), problem);
    // The packed layout of the same format and size holds each plane's row in bytes
    // as its stride; it does not exist for a zero or odd size.
    framecl_frame_layout packed{};
    if (framecl_packed_layout(layout.fourcc, layout.width, layout.height, &packed) == 0)
        return fmt::format("{}: {}", frameText(layout), problem);
    if (layout.num_planes != packed.num_planes)
        return fmt::format("{}: num_planes is {}, {} has {}", frameText(layout), layout.num_planes,
                           framecl_format_name(layout.fourcc), packed.num_planes);
    for (uint32_t p = 0; p < packed.num_planes; ++p)
        if (layout.planes[p].stride < packed.planes[p].stride)
            return fmt::format("{}: plane {} stride {} is below the row of {} bytes",
                               frameText(layout), p, layout.planes[p].stride,
                               packed.planes[p].stride);
    return fmt::format("{}: {}", frameText(layout), problem);
}

// " (plane offsets 0, 307200)" where there are several planes, since a late plane is
// what usually runs past the end; "" for one plane.
std::string planeOffsetsText(const framecl_frame_layout& layout)
{
    if (layout.num_planes < 2)
        return {};
    std::vector<uint32_t> offsets;
    for (uint32_t p = 0; p < layout.num_planes; ++p)
        offsets.push_back(layout.planes[p].offset);
    return fmt::format(" (plane offsets {})", fmt::join(offsets, ", "));
}

// What /proc says the fd is ("/dev/null", "socket:[123]", "/memfd:camera (deleted)"),
// or "" where /proc cannot tell. A file's name is the client's choice: escaped, as it
// goes into log lines and replies.
std::string fdLinkText(int fd)
{
    std::error_code error;
    const auto target = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), error);
    return error ? std::string() : escapeText(target.string());
}

// "a pipe", "a character device (/dev/zero)": for the message that refuses the fd.
// Pipes and sockets go unnamed: /proc calls them "pipe:[inode]".
std::string describeFileKind(const struct stat& st, const std::string& link)
{
    const std::string name = link.empty() ? "" : " (" + link + ")";
    switch (st.st_mode & S_IFMT) {
    case S_IFIFO:
        return "a pipe";
    case S_IFSOCK:
        return "a socket";
    case S_IFCHR:
        return "a character device" + name;
    case S_IFBLK:
        return "a block device" + name;
    case S_IFDIR:
        return "a directory" + name;
    case S_IFREG:
        return "a regular file" + name;
    }
    return "another kind of file" + name; // an eventfd, a timerfd, ...
}

Result<FdKind> bufferKind(int fd, const struct stat& st)
{
    const std::string link = fdLinkText(fd);

    // dma-bufs live on their own pseudo file system since Linux 5.3; before that they
    // were anonymous inodes, which /proc names "anon_inode:dmabuf" (Snapdragon BSPs on
    // 4.14 and 4.19 kernels are still about).
    struct statfs fs {};
    if ((fstatfs(fd, &fs) == 0 && fs.f_type == DMA_BUF_MAGIC) || link == "anon_inode:dmabuf")
        return FdKind::DmaBuf;

    // F_GET_SEALS answers on every shmem file, a tmpfs file in /dev/shm included; what
    // sets a memfd apart is that no directory links it. An unlinked tmpfs file passes
    // too, and is then refused for its seals: it carries F_SEAL_SEAL and nothing else.
    if (S_ISREG(st.st_mode) && st.st_nlink == 0 && fcntl(fd, F_GET_SEALS) >= 0)
        return FdKind::Memfd;

    return fail(fmt::format("fd {} is {}, not a dma-buf or memfd", fd, describeFileKind(st, link)));
}

} // namespace

Result<BufferFdInfo> validateBufferFd(int fd, const framecl_frame_layout& layout,
                                      uint64_t max_frame_pixels)
{
    if (const char* problem = framecl_layout_problem(&layout))
        return fail("layout " + describeLayoutProblem(layout, problem));
    if (uint64_t(layout.width) * layout.height > max_frame_pixels)
        return fail(fmt::format("{}x{} is over limits.max_frame_pixels ({})", layout.width,
                                layout.height, max_frame_pixels));

    struct stat st {};
    if (fstat(fd, &st) != 0)
        return fail(fmt::format("fd {} cannot be inspected: {}", fd, std::strerror(errno)));
    const auto kind = bufferKind(fd, st);
    if (!kind)
        return tl::unexpected(kind.error());

    uint64_t size = 0;
    if (*kind == FdKind::Memfd) {
        // Without F_SEAL_SHRINK a truncate turns the daemon's next touch of the lost
        // pages into SIGBUS (docs/protocol.md, "Buffer checks").
        const int seals = fcntl(fd, F_GET_SEALS);
        if ((seals & F_SEAL_SHRINK) == 0)
            return fail("memfd without F_SEAL_SHRINK: the client could truncate it under the GPU");
        // A memfd is imported through host-ptr, which maps it read-write: a write seal
        // would refuse that mmap with EPERM.
        if (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE))
            return fail("memfd with F_SEAL_WRITE or F_SEAL_FUTURE_WRITE: the daemon maps it "
                        "writable; seal it with F_SEAL_SHRINK (and F_SEAL_GROW, F_SEAL_SEAL) only");
        size = uint64_t(st.st_size);
    } else {
        // st_size is 0 on kernels that made dma-bufs anonymous inodes; SEEK_END reports
        // the exporter's size on all (Documentation/driver-api/dma-buf.rst).
        const off_t end = lseek(fd, 0, SEEK_END);
        if (end < 0)
            return fail(fmt::format("dma-buf fd {}: lseek(SEEK_END) for its size failed: {}", fd,
                                    std::strerror(errno)));
        size = uint64_t(end);
    }

    const uint64_t needed = framecl_layout_end(&layout);
    if (size < needed)
        return fail(fmt::format("buffer is {} bytes, the {} layout{} needs {}", size,
                                frameText(layout), planeOffsetsText(layout), needed));
    return BufferFdInfo{*kind, size};
}

} // namespace framecl::memory
