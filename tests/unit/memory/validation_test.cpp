// The buffer checks of docs/protocol.md ("Buffer checks") on real fds of every kind.
#include <string>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "memory/imported_buffer.hpp"
#include "memory_fds.hpp"
#include "nv12_vga.hpp"
#include "temp_dir.hpp"

using namespace framecl;
using namespace framecl::memory;
using framecl::test::no_pixel_limit, framecl::test::nv12_vga_bytes, framecl::test::nv12Vga;

namespace {

framecl_frame_layout packedLayout(uint32_t fourcc, uint32_t width, uint32_t height)
{
    framecl_frame_layout layout{};
    REQUIRE(framecl_packed_layout(fourcc, width, height, &layout) != 0);
    return layout;
}

// The refusal of `fd` with `layout` (by default NV12 640x480) and no pixel limit.
std::string refusal(int fd, const framecl_frame_layout& layout = nv12Vga())
{
    const auto info = validateBufferFd(fd, layout, no_pixel_limit);
    REQUIRE_FALSE(info.has_value());
    return info.error().message;
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("a sealed memfd large enough for the layout is accepted with its size")
{
    const UniqueFd fd = test::sealedMemfd("accepted", nv12_vga_bytes + 4096);
    const auto info = validateBufferFd(fd.get(), nv12Vga(), no_pixel_limit);
    REQUIRE_MESSAGE(info.has_value(), (info ? "" : info.error().message));
    CHECK(info->kind == FdKind::Memfd);
    CHECK(info->size == nv12_vga_bytes + 4096);
}

TEST_CASE("a pipe is refused as a pipe")
{
    int ends[2];
    REQUIRE(pipe2(ends, O_CLOEXEC) == 0);
    const UniqueFd read_end(ends[0]), write_end(ends[1]);
    const std::string message = refusal(read_end.get());
    CHECK(message == "fd " + std::to_string(read_end.get()) + " is a pipe, not a dma-buf or memfd");
}

TEST_CASE("a socket is refused as a socket")
{
    int ends[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) == 0);
    const UniqueFd ours(ends[0]), theirs(ends[1]);
    const std::string message = refusal(ours.get());
    CHECK(contains(message, "is a socket, not a dma-buf or memfd"));
}

TEST_CASE("/dev/null is refused as a character device, named")
{
    const UniqueFd fd(open("/dev/null", O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    const std::string message = refusal(fd.get());
    CHECK(contains(message, "is a character device (/dev/null), not a dma-buf or memfd"));
}

TEST_CASE("a regular file is refused as a regular file, named")
{
    test::TempDir dir;
    const auto path = dir.write("frame.raw", std::string(nv12_vga_bytes, '\0'));
    const UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    const std::string message = refusal(fd.get());
    CHECK(contains(message, "is a regular file (" + path.string() + "), not a dma-buf or memfd"));
}

TEST_CASE("a file's name, the client's choice, is escaped in the refusal: no forged log line, no broken UTF-8")
{
    test::TempDir dir;
    const std::string name = "frame\n[2026-11-27 00:00:00.000] [ipc] [critical] forged\xff\\x41";
    const auto path = dir.write(name, std::string(nv12_vga_bytes, '\0'));
    const UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    const std::string message = refusal(fd.get());
    CHECK(contains(message, "frame\\x0a[2026-11-27 00:00:00.000] [ipc] [critical] forged\\xff\\x5cx41), not a dma-buf"));
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find('\xff') == std::string::npos);
}

TEST_CASE("a file on tmpfs is refused as a regular file though it answers F_GET_SEALS")
{
    struct statfs fs {};
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) {
        MESSAGE("no tmpfs at /dev/shm: case not exercised");
        return;
    }
    const std::string path = "/dev/shm/framecl-memory-test-" + std::to_string(getpid());
    const UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    REQUIRE(fd.valid());
    REQUIRE(ftruncate(fd.get(), nv12_vga_bytes) == 0);
    const std::string message = refusal(fd.get());
    unlink(path.c_str());
    CHECK(fcntl(fd.get(), F_GET_SEALS) >= 0); // what makes it look like a memfd
    CHECK(contains(message, "is a regular file (" + path + ")"));
}

TEST_CASE("a memfd without F_SEAL_SHRINK is refused")
{
    const UniqueFd fd = test::namedMemfd("unsealed", nv12_vga_bytes, 0);
    CHECK(refusal(fd.get()) ==
          "memfd without F_SEAL_SHRINK: the client could truncate it under the GPU");
}

TEST_CASE("a write-sealed memfd is refused, since the import maps it writable")
{
    const UniqueFd fd =
        test::namedMemfd("write-sealed", nv12_vga_bytes, F_SEAL_SHRINK | F_SEAL_FUTURE_WRITE);
    const std::string message = refusal(fd.get());
    CHECK(contains(message, "memfd with F_SEAL_WRITE or F_SEAL_FUTURE_WRITE"));
    CHECK(contains(message, "writable"));
}

TEST_CASE("a memfd smaller than the layout is refused with both sizes")
{
    const UniqueFd fd = test::sealedMemfd("small", 4096);
    CHECK(refusal(fd.get()) ==
          "buffer is 4096 bytes, the NV12 640x480 layout (plane offsets 0, 307200) needs 460800");
}

TEST_CASE("an NV12 chroma plane offset past the end of the buffer is refused")
{
    const UniqueFd fd = test::sealedMemfd("late-chroma", nv12_vga_bytes);
    framecl_frame_layout layout = nv12Vga();
    layout.planes[1].offset = 320 * 1024; // 320 rows of 640 bytes, then 240 rows of chroma
    CHECK(refusal(fd.get(), layout) ==
          "buffer is 460800 bytes, the NV12 640x480 layout (plane offsets 0, 327680) needs 481280");
}

TEST_CASE("a stride below the row is refused naming the plane")
{
    const UniqueFd fd = test::sealedMemfd("stride", nv12_vga_bytes);
    framecl_frame_layout layout = nv12Vga();
    layout.planes[1].stride = 100;
    const std::string message = refusal(fd.get(), layout);
    CHECK(message == "layout NV12 640x480: plane 1 stride 100 is below the row of 640 bytes");
}

TEST_CASE("an unknown fourcc is refused naming the code")
{
    const UniqueFd fd = test::sealedMemfd("xrgb", nv12_vga_bytes * 2);
    framecl_frame_layout layout = packedLayout(DRM_FORMAT_ABGR8888, 640, 480);
    layout.fourcc = DRM_FORMAT_XRGB8888;
    const std::string message = refusal(fd.get(), layout);
    CHECK(contains(message, "fourcc 'XR24' (0x34325258)"));
    CHECK(contains(message, "unknown pixel format"));
}

TEST_CASE("a plane count that does not match the format is refused")
{
    const UniqueFd fd = test::sealedMemfd("planes", nv12_vga_bytes);
    framecl_frame_layout layout = nv12Vga();
    layout.num_planes = 1;
    CHECK(refusal(fd.get(), layout) == "layout NV12 640x480: num_planes is 1, NV12 has 2");
}

TEST_CASE("an odd NV12 size is refused")
{
    const UniqueFd fd = test::sealedMemfd("odd", nv12_vga_bytes * 2);
    framecl_frame_layout layout = nv12Vga();
    layout.width = 641;
    layout.planes[0].stride = layout.planes[1].stride = 642;
    const std::string message = refusal(fd.get(), layout);
    CHECK(contains(message, "NV12 641x480"));
    CHECK(contains(message, "even width and height"));
}

TEST_CASE("a frame over max_frame_pixels is refused naming the limit")
{
    const UniqueFd fd = test::sealedMemfd("limit", nv12_vga_bytes);
    const auto info = validateBufferFd(fd.get(), nv12Vga(), 1000);
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().message == "640x480 is over limits.max_frame_pixels (1000)");
}

TEST_CASE("a closed fd is refused as one that cannot be inspected")
{
    int number = -1;
    {
        const UniqueFd fd = test::sealedMemfd("closed", nv12_vga_bytes);
        number = fd.get();
    }
    CHECK(contains(refusal(number),
                   "fd " + std::to_string(number) + " cannot be inspected: Bad file descriptor"));
}
