// The Chrome trace JSON of daemon/scheduler/chrome_trace.hpp, parsed back with
// nlohmann::json and checked field by field against the Trace Event Format: complete
// events ("X") with ts/dur in microseconds, metadata events ("M") naming the process
// and one thread per client.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "scheduler/chrome_trace.hpp"

using framecl::scheduler::chromeTraceJson;
using framecl::scheduler::TraceSlice;
using framecl::scheduler::TraceWindow;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Profiling timestamps are device nanoseconds since some epoch far from zero.
constexpr uint64_t kBase = 1'700'000'000'123'456'789ull;

TraceSlice slice(uint64_t client, std::string client_name, uint32_t session, std::string pipeline, uint32_t stage,
                 std::string name, uint64_t sequence, uint64_t start_ns, uint64_t end_ns)
{
    return TraceSlice{client, std::move(client_name), session, std::move(pipeline), stage, std::move(name),
                      sequence, start_ns, end_ns};
}

std::vector<json> eventsOf(const json& trace, const std::string& phase)
{
    std::vector<json> events;
    for (const json& event : trace.at("traceEvents"))
        if (event.at("ph") == phase)
            events.push_back(event);
    return events;
}

// Two clients: the camera with a tiled Sobel stage, the UI with one copy. Given out of
// time order, so the earliest slice is not the first.
std::vector<TraceSlice> twoClients()
{
    return {
        slice(3, "camera", 1, "edges", 1, "sobel_3x3 tile 1/2", 42, kBase + 2'000, kBase + 1'502'500),
        slice(3, "camera", 1, "edges", 1, "sobel_3x3 tile 2/2", 42, kBase + 1'510'000, kBase + 3'010'001),
        slice(7, "ui", 2, "copy", 0, "copy", 9, kBase + 1'000, kBase + 251'000),
    };
}

} // namespace

TEST_CASE("the trace is a JSON object with traceEvents, displayTimeUnit ms and otherData")
{
    const json trace = json::parse(chromeTraceJson(twoClients()));
    REQUIRE(trace.is_object());
    CHECK(trace.size() == 3);
    CHECK(trace.at("traceEvents").is_array());
    CHECK(trace.at("displayTimeUnit") == "ms");
    CHECK(trace.at("otherData") == json{{"slices_left_out", 0}});
    // One process name, two thread names, three slices.
    CHECK(trace.at("traceEvents").size() == 6);
}

TEST_CASE("the process and each client's lane are named by metadata events")
{
    const json trace = json::parse(chromeTraceJson(twoClients()));
    const std::vector<json> metadata = eventsOf(trace, "M");
    REQUIRE(metadata.size() == 3);
    CHECK(metadata[0] == json{{"ph", "M"}, {"pid", 1}, {"name", "process_name"}, {"args", {{"name", "framecld"}}}});
    CHECK(metadata[1] == json{{"ph", "M"},
                              {"pid", 1},
                              {"tid", 3},
                              {"name", "thread_name"},
                              {"args", {{"name", "camera (client 3)"}}}});
    CHECK(metadata[2] ==
          json{{"ph", "M"}, {"pid", 1}, {"tid", 7}, {"name", "thread_name"}, {"args", {{"name", "ui (client 7)"}}}});
}

TEST_CASE("each slice is a complete event in microseconds from the earliest slice")
{
    const json trace = json::parse(chromeTraceJson(twoClients()));
    const std::vector<json> slices = eventsOf(trace, "X");
    REQUIRE(slices.size() == 3);

    CHECK(slices[0] == json{{"ph", "X"},
                            {"pid", 1},
                            {"tid", 3},
                            {"name", "sobel_3x3 tile 1/2"},
                            {"cat", "dispatch"},
                            {"ts", 1.0},
                            {"dur", 1500.5},
                            {"args", {{"session", 1}, {"pipeline", "edges"}, {"stage", 1}, {"sequence", 42}}}});
    CHECK(slices[1] == json{{"ph", "X"},
                            {"pid", 1},
                            {"tid", 3},
                            {"name", "sobel_3x3 tile 2/2"},
                            {"cat", "dispatch"},
                            {"ts", 1509.0},
                            {"dur", 1500.001},
                            {"args", {{"session", 1}, {"pipeline", "edges"}, {"stage", 1}, {"sequence", 42}}}});
    CHECK(slices[2] == json{{"ph", "X"},
                            {"pid", 1},
                            {"tid", 7},
                            {"name", "copy"},
                            {"cat", "dispatch"},
                            {"ts", 0.0},
                            {"dur", 250.0},
                            {"args", {{"session", 2}, {"pipeline", "copy"}, {"stage", 0}, {"sequence", 9}}}});
    for (const json& event : slices) {
        CHECK(event.at("ts").is_number_float());
        CHECK(event.at("dur").is_number_float());
    }
}

TEST_CASE("a lane is named after the client's first slice, or by its id alone without a name")
{
    const std::vector<TraceSlice> slices = {
        slice(1, "", 1, "p", 0, "a", 1, kBase, kBase + 10),
        slice(2, "first", 1, "p", 0, "b", 1, kBase, kBase + 10),
        slice(2, "second", 1, "p", 0, "c", 2, kBase + 20, kBase + 30),
    };
    const std::vector<json> metadata = eventsOf(json::parse(chromeTraceJson(slices)), "M");
    REQUIRE(metadata.size() == 3);
    CHECK(metadata[1].at("args").at("name") == "client 1");
    CHECK(metadata[2].at("args").at("name") == "first (client 2)");
}

TEST_CASE("a slice ending before it starts has no duration")
{
    const std::vector<TraceSlice> slices = {slice(1, "c", 1, "p", 0, "a", 1, kBase + 5'000, kBase + 4'000)};
    const std::vector<json> events = eventsOf(json::parse(chromeTraceJson(slices)), "X");
    REQUIRE(events.size() == 1);
    CHECK(events[0].at("ts") == 0.0);
    CHECK(events[0].at("dur") == 0.0);
}

TEST_CASE("a client name that is not UTF-8 is replaced, not thrown on")
{
    const std::vector<TraceSlice> slices = {slice(1, "cam\xff", 1, "p", 0, "a\"b", 1, kBase, kBase + 1'000)};
    const json trace = json::parse(chromeTraceJson(slices));
    CHECK(eventsOf(trace, "M")[1].at("args").at("name") == "cam\xef\xbf\xbd (client 1)");
    CHECK(eventsOf(trace, "X")[0].at("name") == "a\"b");
}

TEST_CASE("an empty trace still names the process")
{
    const json trace = json::parse(chromeTraceJson({}));
    REQUIRE(trace.at("traceEvents").size() == 1);
    CHECK(trace.at("traceEvents")[0].at("name") == "process_name");
    CHECK(trace.at("otherData").at("slices_left_out") == 0);
}

TEST_CASE("a trace window is open until its end")
{
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    const TraceWindow window(t0 + 5s);
    CHECK(window.open(t0));
    CHECK(window.open(t0 + 5s - 1ns));
    CHECK_FALSE(window.open(t0 + 5s));
    CHECK_FALSE(window.open(t0 + 6s));
}

TEST_CASE("a trace window keeps its slices up to the cap and counts those left out")
{
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    TraceWindow window(t0 + 5s, 3);
    for (uint64_t i = 0; i < 5; ++i)
        window.add(slice(1, "camera", 1, "edges", 0, "sobel_3x3", i, kBase + i * 1'000, kBase + i * 1'000 + 500));
    CHECK(window.size() == 3);
    CHECK(window.slicesLeftOut() == 2);

    const json trace = json::parse(window.json());
    CHECK(trace.at("otherData") == json{{"slices_left_out", 2}});
    const std::vector<json> slices = eventsOf(trace, "X");
    REQUIRE(slices.size() == 3);
    for (uint64_t i = 0; i < 3; ++i) {
        CHECK(slices[i].at("args").at("sequence") == i);
        CHECK(slices[i].at("ts") == static_cast<double>(i));
        CHECK(slices[i].at("dur") == 0.5);
    }
}

TEST_CASE("a trace window keeps each name once, however many slices repeat it")
{
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    TraceWindow window(t0 + 5s);
    const std::string client_name(64, 'c'); // the longest name a client may give
    const std::string pipeline(100, 'p');
    constexpr uint64_t slices = 100'000;
    for (uint64_t i = 0; i < slices; ++i)
        window.add(slice(1, client_name, 1, pipeline, 0, i % 2 ? "sobel_3x3 tile 2/2" : "sobel_3x3 tile 1/2", i,
                         kBase + i * 1'000, kBase + i * 1'000 + 500));
    // The slices' own fields, and the four strings once: not a copy of each per slice.
    CHECK(window.bytesHeld() <= slices * 64);

    const json trace = json::parse(window.json());
    const std::vector<json> events = eventsOf(trace, "X");
    REQUIRE(events.size() == slices);
    CHECK(events[1].at("name") == "sobel_3x3 tile 2/2");
    CHECK(events[slices - 1].at("args").at("pipeline") == pipeline);
    CHECK(eventsOf(trace, "M")[1].at("args").at("name") == client_name + " (client 1)");
}
