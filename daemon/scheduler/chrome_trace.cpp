#include "scheduler/chrome_trace.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

namespace framecl::scheduler {
namespace {

// framecld is the one process of the trace; a constant keeps traces comparable.
constexpr int kPid = 1;

// Event by event rather than one document: a full window of slices as one nlohmann
// tree would take several times the memory of the text it becomes. Client names come
// from clients, so bytes that are not UTF-8 are replaced rather than thrown on.
void appendEvent(std::string& out, const nlohmann::json& event)
{
    if (out.back() != '[')
        out += ',';
    out += "\n";
    out += event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string laneName(const TraceSlice& slice)
{
    const std::string id = "client " + std::to_string(slice.client);
    return slice.client_name.empty() ? id : slice.client_name + " (" + id + ")";
}

// Nanoseconds to the format's microseconds, keeping the fraction.
double micros(uint64_t ns)
{
    return static_cast<double>(ns) / 1000.0;
}

} // namespace

std::string chromeTraceJson(const std::vector<TraceSlice>& slices, uint64_t slices_left_out)
{
    std::string out = "{\"traceEvents\":[";

    appendEvent(out, {{"ph", "M"}, {"pid", kPid}, {"name", "process_name"}, {"args", {{"name", "framecld"}}}});

    // One lane per client, named after its first slice, in the order of client ids.
    std::map<uint64_t, std::string> lanes;
    for (const TraceSlice& slice : slices)
        lanes.try_emplace(slice.client, laneName(slice));
    for (const auto& [client, name] : lanes)
        appendEvent(out, {{"ph", "M"}, {"pid", kPid}, {"tid", client}, {"name", "thread_name"},
                          {"args", {{"name", name}}}});

    uint64_t earliest = 0;
    if (!slices.empty())
        earliest = std::min_element(slices.begin(), slices.end(), [](const TraceSlice& a, const TraceSlice& b) {
                       return a.start_ns < b.start_ns;
                   })->start_ns;

    for (const TraceSlice& slice : slices) {
        // A slice whose end precedes its start (a driver's clock going back) is drawn
        // with no length rather than wrapping around.
        const uint64_t duration = slice.end_ns > slice.start_ns ? slice.end_ns - slice.start_ns : 0;
        appendEvent(out, {{"ph", "X"},
                          {"pid", kPid},
                          {"tid", slice.client},
                          {"name", slice.name},
                          {"cat", "dispatch"},
                          {"ts", micros(slice.start_ns - earliest)},
                          {"dur", micros(duration)},
                          {"args",
                           {{"session", slice.session},
                            {"pipeline", slice.pipeline},
                            {"stage", slice.stage},
                            {"sequence", slice.sequence}}}});
    }

    out += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"slices_left_out\":";
    out += std::to_string(slices_left_out);
    out += "}}\n";
    return out;
}

TraceWindow::TraceWindow(Clock::time_point ends, size_t max_slices) : ends_(ends), max_slices_(max_slices) {}

void TraceWindow::add(TraceSlice slice)
{
    if (slices_.size() >= max_slices_) {
        ++left_out_;
        return;
    }
    slices_.push_back(std::move(slice));
}

std::string TraceWindow::json() const
{
    return chromeTraceJson(slices_, left_out_);
}

} // namespace framecl::scheduler
