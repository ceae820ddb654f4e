#pragma once
// A vgem dma-buf registered with a client, read and written as a camera would: through
// its mapping, each access between the CPU-access calls (tests/vm/README.md).

#include <cstring>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "guest_daemon.hpp"

namespace framecl::test {

// A frame buffer the test reads and writes as the camera would: mapped, each access
// bracketed by the CPU-access calls.
struct DmaBufFrame {
    framecl_frame_layout layout{};
    uint64_t size = 0;
    UniqueFd fd;
    uint32_t id = 0;
    uint8_t* bytes = nullptr;

    DmaBufFrame(framecl_client* client, const framecl_frame_layout& frame_layout) : layout(frame_layout)
    {
        fd = vgemBuffer(framecl_layout_end(&layout));
        size = uint64_t(lseek(fd.get(), 0, SEEK_END));
        void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
        REQUIRE(mapping != MAP_FAILED);
        bytes = static_cast<uint8_t*>(mapping);
        REQUIRE_MESSAGE(framecl_register_buffer(client, fd.get(), &layout, &id) == 0, std::string(framecl_last_error(client)));
    }
    ~DmaBufFrame() { munmap(bytes, size); }
    DmaBufFrame(const DmaBufFrame&) = delete;
    DmaBufFrame& operator=(const DmaBufFrame&) = delete;

    // Plane `p` written from `packed` (rows of `row` bytes), the padding left alone.
    void writePlane(uint32_t p, const std::vector<uint8_t>& packed, uint32_t row, uint32_t rows)
    {
        REQUIRE(framecl_begin_cpu_access(fd.get(), FRAMECL_CPU_WRITE) == 0);
        for (uint32_t r = 0; r < rows; ++r)
            std::memcpy(bytes + layout.planes[p].offset + size_t(r) * layout.planes[p].stride, &packed[size_t(r) * row],
                        row);
        REQUIRE(framecl_end_cpu_access(fd.get(), FRAMECL_CPU_WRITE) == 0);
    }

    // Plane `p` read back without its padding.
    std::vector<uint8_t> readPlane(uint32_t p, uint32_t row, uint32_t rows) const
    {
        std::vector<uint8_t> packed(size_t(row) * rows);
        REQUIRE(framecl_begin_cpu_access(fd.get(), FRAMECL_CPU_READ) == 0);
        for (uint32_t r = 0; r < rows; ++r)
            std::memcpy(&packed[size_t(r) * row], bytes + layout.planes[p].offset + size_t(r) * layout.planes[p].stride,
                        row);
        REQUIRE(framecl_end_cpu_access(fd.get(), FRAMECL_CPU_READ) == 0);
        return packed;
    }
};

inline std::vector<uint8_t> noise(size_t bytes, std::mt19937& random)
{
    std::vector<uint8_t> values(bytes);
    for (auto& value : values)
        value = uint8_t(random());
    return values;
}

} // namespace framecl::test
