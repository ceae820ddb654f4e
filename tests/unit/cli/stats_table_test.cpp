// `framecl stats` tables from StatsReply JSON written from docs/protocol.md.

#include "cli/stats_table.hpp"

#include <doctest/doctest.h>
#include <string>

using framecl::cli::statsTable;
using nlohmann::json;

namespace {

// docs/protocol.md, "StatsReply JSON", with every field.
const json full = json::parse(R"json({
  "daemon": {"version": "0.1.0", "device": "PoCL CPU (host-ptr)", "uptime_s": 3725.5,
             "kernel_budget_ms": 8, "perf_hint": "high", "timing": "host: gpu.timestamps = \"host\""},
  "clients": [
    {"name": "camera-preview", "id": 3, "class": "camera", "weight": 3, "pid": 1234,
     "uid": 1000, "gpu_share": 0.425, "frames_waiting": 2, "buffers": 8, "bytes": 3686400,
     "import_paths": {"host-ptr": 6, "khr-dmabuf": 2}, "buffer_kinds": {"dma-buf": 4, "memfd": 4},
     "dma_buf_syncs": 400,
     "sessions": [{"id": 1, "pipeline": "edges", "recording": "khr",
                   "backpressure": "drop_oldest", "deadline_us": 33000,
                   "frames_done": 200, "frames_failed": 1, "frames_dropped": 4,
                   "frames_busy": 0, "frames_in_flight": 2, "fps": 29.97,
                   "latency_ms": {"p50": 1.2, "p99": 2.345, "max": 4},
                   "budget_overruns": 5,
                   "stages": [{"stage": "sobel", "tiles": 4, "longest_dispatch_ms": 3.2,
                               "overruns": 5, "estimated": false, "image_copies": 7},
                              {"stage": "luma", "tiles": 1, "longest_dispatch_ms": 0.8,
                               "overruns": 0, "estimated": true, "fusion": "stages 2-3 as fused_color_copy"}]}]}
  ],
  "released_on_disconnect": {"clients": 1, "buffers": 4, "sessions": 1}
})json");

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// The line of `text` that holds `part`.
std::string lineWith(const std::string& text, const std::string& part)
{
    const size_t at = text.find(part);
    if (at == std::string::npos)
        return {};
    const size_t begin = text.rfind('\n', at) + 1;
    return text.substr(begin, text.find('\n', at) - begin);
}

} // namespace

TEST_CASE("the daemon's summary gives version, device, uptime, budget, perf hint and timing")
{
    const std::string text = statsTable(full);
    CHECK(contains(text, "framecld 0.1.0 on PoCL CPU (host-ptr), up 1h 02m 05s\n"));
    CHECK(contains(text, "kernel budget 8 ms, perf hint high, timing host: gpu.timestamps = \"host\"\n"));
}

TEST_CASE("a client's row gives its identity, class, GPU share, waiting frames and import paths")
{
    const std::string row = lineWith(statsTable(full), "camera-preview  ");
    CHECK(row == "camera-preview   3  camera       3  1234  1000      42.5%        2  host-ptr 6, khr-dmabuf 2 (dma-buf 4, memfd 4)");
}

TEST_CASE("a session's row gives its options, counts, rate, latency and overruns")
{
    const std::string row = lineWith(statsTable(full), "edges");
    CHECK(row == "camera-preview        1  edges     khr        drop_oldest      33 ms   200       1        4"
                 "     0          2  30.0          1.20/2.35/4.00         5");
}

TEST_CASE("a stage's row gives its tiles, longest dispatch, overruns and image copies, and says when estimated")
{
    const std::string text = statsTable(full);
    CHECK(contains(lineWith(text, "sobel"), "3.200"));
    CHECK(contains(lineWith(text, "sobel"), "5             7"));
    CHECK_FALSE(contains(lineWith(text, "sobel"), "estimated"));
    CHECK(contains(lineWith(text, "luma"), "0.800 (estimated)"));
}

TEST_CASE("a fused stage's row says which stages run as which kernel")
{
    const std::string text = statsTable(full);
    CHECK(contains(lineWith(text, "luma"), "stages 2-3 as fused_color_copy"));
    CHECK_FALSE(contains(lineWith(text, "sobel"), "fused"));
}

TEST_CASE("fields framecld did not send, or sent as null, show as -")
{
    const json sparse = json::parse(R"({
      "daemon": {"version": "0.1.0", "perf_hint": null},
      "clients": [{"name": "old", "class": null,
                   "sessions": [{"id": 1, "pipeline": "copy", "deadline_us": 0}]}]
    })");
    const std::string text = statsTable(sparse);
    CHECK(contains(text, "framecld 0.1.0 on -, up -\n"));
    CHECK(contains(text, "kernel budget -, perf hint none, timing -\n"));
    CHECK(lineWith(text, "old  ") == "old      -  -           -    -    -          -        -  -");
    // A deadline of 0 is no deadline.
    CHECK(lineWith(text, "copy") ==
          "old           1  copy      -          -                 none     -       -        -     -          -    -"
          "                       -         -");
    CHECK_FALSE(contains(text, "released"));
}

TEST_CASE("two clients of one name are told apart by id; no clients is said so")
{
    const json twins = json::parse(R"({"clients": [
      {"name": "cam", "id": 1, "sessions": [{"id": 1, "pipeline": "a"}]},
      {"name": "cam", "id": 2, "sessions": [{"id": 1, "pipeline": "b"}]}]})");
    const std::string text = statsTable(twins);
    CHECK(lineWith(text, "  a").rfind("cam #1", 0) == 0);
    CHECK(lineWith(text, "  b").rfind("cam #2", 0) == 0);
    CHECK(contains(statsTable(json::parse(R"({"clients": []})")), "no clients connected\n"));
}

TEST_CASE("what was released at disconnect closes the summary")
{
    CHECK(contains(statsTable(full),
                   "released when their client went away: 1 client, 1 session, 4 buffers\n"));
}
