#include "scheduler/chrome_trace.hpp"

#include <algorithm>
#include <cstdint>
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

// The trace's text, written event by event.
class TraceWriter {
public:
    TraceWriter() { appendEvent(out_, {{"ph", "M"}, {"pid", kPid}, {"name", "process_name"}, {"args", {{"name", "framecld"}}}}); }

    void lane(uint64_t client, const std::string& name)
    {
        appendEvent(out_, {{"ph", "M"}, {"pid", kPid}, {"tid", client}, {"name", "thread_name"},
                           {"args", {{"name", name}}}});
    }

    // `earliest`: the start of the earliest slice, where the trace's time begins.
    void slice(const TraceSlice& slice, uint64_t earliest)
    {
        // A slice whose end precedes its start (a driver's clock going back) is drawn
        // with no length rather than wrapping around.
        const uint64_t duration = slice.end_ns > slice.start_ns ? slice.end_ns - slice.start_ns : 0;
        appendEvent(out_, {{"ph", "X"},
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

    std::string finish(uint64_t slices_left_out)
    {
        out_ += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"slices_left_out\":";
        out_ += std::to_string(slices_left_out);
        out_ += "}}\n";
        return std::move(out_);
    }

private:
    std::string out_ = "{\"traceEvents\":[";
};

} // namespace

std::string chromeTraceJson(const std::vector<TraceSlice>& slices, uint64_t slices_left_out)
{
    TraceWriter writer;
    // One lane per client, named after its first slice, in the order of client ids.
    std::map<uint64_t, std::string> lanes;
    for (const TraceSlice& slice : slices)
        lanes.try_emplace(slice.client, laneName(slice));
    for (const auto& [client, name] : lanes)
        writer.lane(client, name);

    uint64_t earliest = UINT64_MAX;
    for (const TraceSlice& slice : slices)
        earliest = std::min(earliest, slice.start_ns);
    for (const TraceSlice& slice : slices)
        writer.slice(slice, earliest);
    return writer.finish(slices_left_out);
}

TraceWindow::TraceWindow(Clock::time_point ends, size_t max_slices) : ends_(ends), max_slices_(max_slices) {}

uint32_t TraceWindow::intern(const std::string& text)
{
    auto found = string_index_.find(text);
    if (found != string_index_.end())
        return found->second;
    strings_.push_back(text);
    string_index_.emplace(text, uint32_t(strings_.size() - 1));
    return uint32_t(strings_.size() - 1);
}

void TraceWindow::add(const TraceSlice& slice)
{
    if (slices_.size() >= max_slices_) {
        ++left_out_;
        return;
    }
    lane_names_.try_emplace(slice.client, laneName(slice));
    slices_.push_back({slice.client, slice.sequence, slice.start_ns, slice.end_ns, slice.session, slice.stage,
                       intern(slice.pipeline), intern(slice.name)});
}

size_t TraceWindow::bytesHeld() const
{
    size_t bytes = slices_.capacity() * sizeof(StoredSlice);
    for (const std::string& text : strings_)
        bytes += 2 * (sizeof(std::string) + text.capacity()); // in strings_ and as a key of string_index_
    for (const auto& [client, name] : lane_names_)
        bytes += sizeof(client) + sizeof(std::string) + name.capacity();
    return bytes;
}

std::string TraceWindow::json() const
{
    TraceWriter writer;
    for (const auto& [client, name] : lane_names_)
        writer.lane(client, name);
    uint64_t earliest = UINT64_MAX;
    for (const StoredSlice& stored : slices_)
        earliest = std::min(earliest, stored.start_ns);
    for (const StoredSlice& stored : slices_)
        writer.slice({stored.client, {}, stored.session, strings_[stored.pipeline], stored.stage,
                      strings_[stored.name], stored.sequence, stored.start_ns, stored.end_ns},
                     earliest);
    return writer.finish(left_out_);
}

} // namespace framecl::scheduler
