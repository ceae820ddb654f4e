// The ccm plugin on the test device (PoCL in CI), through sessions on padded buffers,
// against daemon/reference/reference_isp.hpp, exactly: a camera's matrix with offsets, the
// identity it takes unset, and sums that clamp at both ends; and what it refuses.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "filter_test_support.hpp"
#include "reference_isp.hpp"

using namespace framecl;
using test::LaidOutBuffer;
using test::paddedLayout;

namespace {

// A daylight sensor matrix (rows sum to 1) and offsets that push some sums below 0.
const std::string test_pipelines = R"(
[[pipeline]]
name = "camera"
stages = [ { plugin = "ccm", matrix = [1.78, -0.62, -0.16, -0.24, 1.51, -0.27, 0.03, -0.58, 1.55], offsets = [-300, 0, 125.5] } ]
[[pipeline]]
name = "identity"
stages = [ { plugin = "ccm" } ]
)";

test::FilterDevice& device()
{
    static test::FilterDevice device(test_pipelines);
    return device;
}

std::vector<uint16_t> values(const std::vector<uint8_t>& bytes)
{
    std::vector<uint16_t> out(bytes.size() / 2);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

std::vector<uint16_t> run(const std::string& name, LaidOutBuffer& in)
{
    auto session = device().open(name, {DRM_FORMAT_ABGR16161616, in.layout.width, in.layout.height});
    LaidOutBuffer out(*device().gpu, paddedLayout(session->output(), 6), 0);
    device().run(*session, in, out);
    CHECK(out.paddingWritten() == 0);
    return values(out.plane(0));
}

} // namespace

TEST_CASE("a colour-correction matrix with offsets equals the reference, clamping at both ends")
{
    const double matrix[9] = {1.78, -0.62, -0.16, -0.24, 1.51, -0.27, 0.03, -0.58, 1.55};
    const double offsets[3] = {-300, 0, 125.5};
    for (const auto& [width, height] : {std::pair{37u, 5u}, std::pair{160u, 90u}}) {
        LaidOutBuffer in(*device().gpu, paddedLayout({DRM_FORMAT_ABGR16161616, width, height}, 5), width);
        const std::vector<uint16_t> input = values(in.plane(0));
        const std::vector<uint16_t> expected = reference::colourCorrect(input, matrix, offsets);
        const std::vector<uint16_t> got = run("camera", in);
        CHECK(got == expected);
        CHECK(std::count(expected.begin(), expected.end(), 0) > 0);     // clamped below
        CHECK(std::count(expected.begin(), expected.end(), 65535) > 0); // and above (alpha aside)
    }
}

TEST_CASE("ccm without a matrix is the identity")
{
    LaidOutBuffer in(*device().gpu, paddedLayout({DRM_FORMAT_ABGR16161616, 33u, 7u}, 3), 5);
    CHECK(run("identity", in) == values(in.plane(0)));
}

TEST_CASE("ccm refuses what it cannot do, naming it")
{
    auto grey = device().tryOpen("identity", {DRM_FORMAT_ABGR8888, 8, 8});
    REQUIRE_FALSE(grey);
    CHECK(grey.error().message.find("input must be ABGR16161616, got ABGR8888") != std::string::npos);
    CHECK(device()
              .leftOut("[[pipeline]]\nname = \"eight\"\nstages = [ { plugin = \"ccm\", matrix = [1, 0, 0, 0, 1, 0, 0, 0] } ]\n",
                       "eight")
              .find("matrix has 8 values: give nine, row by row") != std::string::npos);
}
