// gpu/timestamps.hpp: which clock GPU work is timed with. The check's verdict on
// timestamps a device might give, and on PoCL's own, whose clock is sound; and what
// the host's clock leaves out.
#include <doctest/doctest.h>

#include "gpu/timestamps.hpp"
#include "gpu_test_support.hpp"

using namespace framecl;
using gpu::CommandTimestamps;
using gpu::timestampProblem;

namespace {

constexpr uint64_t host_ns = 2'000'000; // the host waited 2 ms for the fill

bool mentions(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("timestamps in order and within the host's wait are sound")
{
    CHECK(timestampProblem({1000, 2000, 3000, 900'000}, host_ns, true) == "");
    // A short fill may take no time by a coarse clock; only the largest must not.
    CHECK(timestampProblem({1000, 1000, 5000, 5000}, host_ns, false) == "");
}

TEST_CASE("zero timestamps, as rusticl 22.3 gives, are refused")
{
    CHECK(mentions(timestampProblem({0, 0, 0, 0}, host_ns, true), "zero"));
    CHECK(mentions(timestampProblem({1000, 2000, 0, 4000}, host_ns, false), "zero"));
}

TEST_CASE("timestamps out of order are refused")
{
    CHECK(mentions(timestampProblem({5000, 2000, 3000, 4000}, host_ns, false), "out of order"));
    CHECK(mentions(timestampProblem({1000, 2000, 4000, 3000}, host_ns, false), "out of order"));
}

TEST_CASE("a large fill that took no time is refused")
{
    CHECK(mentions(timestampProblem({1000, 2000, 3000, 3000}, host_ns, true), "no time"));
}

TEST_CASE("a fill longer by its timestamps than the host waited for it is refused")
{
    // Picoseconds taken for nanoseconds, say: 1000 times too long.
    CHECK(mentions(timestampProblem({1000, 2000, 3000, 3000 + host_ns * 1000}, host_ns, true), "host's clock"));
    // Within the millisecond of slack the two clocks' readings allow.
    CHECK(timestampProblem({1000, 2000, 3000, 1000 + host_ns + 500'000}, host_ns, true) == "");
}

TEST_CASE("PoCL's profiling timestamps pass the check, and gpu.timestamps = host chooses the host's clock")
{
    const auto pocl = test::openTestGpu(test::pocl_device);
    CHECK_MESSAGE(pocl->clock().device(), pocl->clock().reason);

    const auto host = test::openTestGpu(test::pocl_device, config::TimestampSource::Host);
    CHECK_FALSE(host->clock().device());
    CHECK(mentions(host->clock().reason, "gpu.timestamps"));
    // No device span is handed out on the host's clock, whatever the event carries.
    cl::Event event;
    const uint8_t zero = 0;
    cl::Buffer buffer(host->context(), CL_MEM_READ_WRITE, 4096);
    REQUIRE(host->queue().enqueueFillBuffer(buffer, zero, 0, 4096, nullptr, &event) == CL_SUCCESS);
    REQUIRE(event.wait() == CL_SUCCESS);
    CHECK_FALSE(host->profiledSpan(event).has_value());
    CHECK(pocl->profiledSpan(event).has_value());
}
