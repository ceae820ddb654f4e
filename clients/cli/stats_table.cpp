#include "stats_table.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "text_table.hpp"

namespace framecl::cli {
namespace {

using nlohmann::json;
using Align = TextTable::Align;

constexpr const char* missing = "-";

// The member `key` of `object`, or nullptr where there is none or it is null.
const json* member(const json& object, const char* key)
{
    if (!object.is_object())
        return nullptr;
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string number(const json* value, int decimals)
{
    if (!value || !value->is_number())
        return missing;
    if (value->is_number_unsigned())
        return std::to_string(value->get<uint64_t>());
    if (value->is_number_integer())
        return std::to_string(value->get<int64_t>());
    return fmt::format("{:.{}f}", value->get<double>(), decimals);
}

// Counts and ids: integers, or a float the daemon may send for one (a weight of 1.5).
std::string count(const json& object, const char* key)
{
    const json* value = member(object, key);
    if (value && value->is_number_float()) {
        const double x = value->get<double>();
        return x == std::floor(x) && std::abs(x) < 1e15 ? fmt::format("{:.0f}", x) : fmt::format("{:g}", x);
    }
    return number(value, 0);
}

std::string decimal(const json& object, const char* key, int decimals)
{
    const json* value = member(object, key);
    if (value && value->is_number_integer())
        return fmt::format("{:.{}f}", value->get<double>(), decimals);
    return number(value, decimals);
}

std::string text(const json& object, const char* key)
{
    const json* value = member(object, key);
    if (!value)
        return missing;
    if (value->is_string())
        return value->get<std::string>().empty() ? missing : value->get<std::string>();
    if (value->is_boolean())
        return value->get<bool>() ? "yes" : "no";
    return value->dump();
}

std::string percent(const json& object, const char* key)
{
    const json* value = member(object, key);
    if (!value || !value->is_number())
        return missing;
    return fmt::format("{:.1f}%", value->get<double>() * 100.0);
}

// "33 ms", "2.5 ms"; 0 is "none": no deadline.
std::string deadline(const json& session)
{
    const json* value = member(session, "deadline_us");
    if (!value || !value->is_number())
        return missing;
    const double us = value->get<double>();
    return us == 0 ? "none" : fmt::format("{:g} ms", us / 1000.0);
}

std::string latency(const json& session)
{
    const json* latency = member(session, "latency_ms");
    if (!latency || !latency->is_object())
        return missing;
    const std::string p50 = decimal(*latency, "p50", 2), p99 = decimal(*latency, "p99", 2),
                      max = decimal(*latency, "max", 2);
    if (p50 == missing && p99 == missing && max == missing)
        return missing;
    return fmt::format("{}/{}/{}", p50, p99, max);
}

// {"host-ptr": 8, "khr-dmabuf": 2} as "host-ptr 8, khr-dmabuf 2"; "" for a key that is
// not an object.
std::string countsText(const json* counts)
{
    if (!counts || !counts->is_object())
        return {};
    std::string out;
    for (const auto& [name, buffers] : counts->items())
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, number(&buffers, 0));
    return out;
}

// The buffers' import paths, then the kinds of fd they came as:
// "host-ptr 6, khr-dmabuf 2 (dma-buf 8)".
std::string importPaths(const json& client)
{
    const json* paths = member(client, "import_paths");
    if (!paths || !paths->is_object())
        return missing;
    if (paths->empty())
        return "none";
    const std::string kinds = countsText(member(client, "buffer_kinds"));
    return countsText(paths) + (kinds.empty() ? "" : " (" + kinds + ")");
}

std::string uptime(const json& daemon)
{
    const json* value = member(daemon, "uptime_s");
    if (!value || !value->is_number())
        return missing;
    const double seconds = value->get<double>();
    if (seconds < 60)
        return fmt::format("{:.1f} s", seconds);
    const auto whole = uint64_t(seconds);
    const uint64_t days = whole / 86400, hours = whole / 3600 % 24, minutes = whole / 60 % 60, secs = whole % 60;
    if (days)
        return fmt::format("{}d {:02}h {:02}m", days, hours, minutes);
    if (hours)
        return fmt::format("{}h {:02}m {:02}s", hours, minutes, secs);
    return fmt::format("{}m {:02}s", minutes, secs);
}

std::string daemonSummary(const json& stats)
{
    static const json none = json::object();
    const json* found = member(stats, "daemon");
    const json& daemon = found ? *found : none;
    const json* budget = member(daemon, "kernel_budget_ms");
    // null: the device has no cl_qcom_perf_hint, so there is no hint to switch.
    const std::string hint = member(daemon, "perf_hint") ? text(daemon, "perf_hint")
                             : daemon.contains("perf_hint") ? "none"
                                                            : missing;
    return fmt::format("framecld {} on {}, up {}\nkernel budget {}, perf hint {}, timing {}\n",
                       text(daemon, "version"), text(daemon, "device"), uptime(daemon),
                       budget && budget->is_number() ? fmt::format("{:g} ms", budget->get<double>()) : missing, hint,
                       text(daemon, "timing"));
}

const json& clientList(const json& stats)
{
    static const json none = json::array();
    const json* clients = member(stats, "clients");
    return clients && clients->is_array() ? *clients : none;
}

// How the session and stage tables name a client: its name, with its id where another
// client has the same name (two cameras of one binary).
std::map<const json*, std::string> clientLabels(const json& clients)
{
    std::map<std::string, int> uses;
    for (const json& client : clients)
        ++uses[text(client, "name")];
    std::map<const json*, std::string> labels;
    for (const json& client : clients) {
        const std::string name = text(client, "name");
        labels[&client] = uses[name] > 1 ? fmt::format("{} #{}", name, count(client, "id")) : name;
    }
    return labels;
}

const json& sessionList(const json& client)
{
    static const json none = json::array();
    const json* sessions = member(client, "sessions");
    return sessions && sessions->is_array() ? *sessions : none;
}

const json& stageList(const json& session)
{
    static const json none = json::array();
    const json* stages = member(session, "stages");
    return stages && stages->is_array() ? *stages : none;
}

std::string clientTable(const json& clients)
{
    TextTable table({{"CLIENT", Align::Left},
                     {"ID", Align::Right},
                     {"CLASS", Align::Left},
                     {"WEIGHT", Align::Right},
                     {"PID", Align::Right},
                     {"UID", Align::Right},
                     {"GPU SHARE", Align::Right},
                     {"WAITING", Align::Right},
                     {"IMPORTS", Align::Left}});
    for (const json& client : clients)
        table.addRow({text(client, "name"), count(client, "id"), text(client, "class"), count(client, "weight"),
                      count(client, "pid"), count(client, "uid"), percent(client, "gpu_share"),
                      count(client, "frames_waiting"), importPaths(client)});
    return table.render();
}

std::string sessionTable(const json& clients, const std::map<const json*, std::string>& labels)
{
    TextTable table({{"CLIENT", Align::Left},
                     {"SESSION", Align::Right},
                     {"PIPELINE", Align::Left},
                     {"RECORDING", Align::Left},
                     {"BACKPRESSURE", Align::Left},
                     {"DEADLINE", Align::Right},
                     {"DONE", Align::Right},
                     {"FAILED", Align::Right},
                     {"DROPPED", Align::Right},
                     {"BUSY", Align::Right},
                     {"IN FLIGHT", Align::Right},
                     {"FPS", Align::Right},
                     {"LATENCY MS p50/p99/max", Align::Right},
                     {"OVERRUNS", Align::Right}});
    for (const json& client : clients)
        for (const json& session : sessionList(client))
            table.addRow({labels.at(&client), count(session, "id"), text(session, "pipeline"),
                          text(session, "recording"), text(session, "backpressure"), deadline(session),
                          count(session, "frames_done"), count(session, "frames_failed"),
                          count(session, "frames_dropped"), count(session, "frames_busy"),
                          count(session, "frames_in_flight"), decimal(session, "fps", 1), latency(session),
                          count(session, "budget_overruns")});
    return table.empty() ? std::string("no sessions open\n") : table.render();
}

std::string stageTable(const json& clients, const std::map<const json*, std::string>& labels)
{
    TextTable table({{"CLIENT", Align::Left},
                     {"SESSION", Align::Right},
                     {"STAGE", Align::Left},
                     {"TILES", Align::Right},
                     {"LONGEST DISPATCH MS", Align::Right},
                     {"OVERRUNS", Align::Right},
                     {"IMAGE COPIES", Align::Right},
                     {"FUSION", Align::Left}});
    for (const json& client : clients)
        for (const json& session : sessionList(client))
            for (const json& stage : stageList(session)) {
                std::string longest = decimal(stage, "longest_dispatch_ms", 3);
                // Scaled from a whole recording's time rather than measured per dispatch.
                if (const json* estimated = member(stage, "estimated");
                    longest != missing && estimated && estimated->is_boolean() && estimated->get<bool>())
                    longest += " (estimated)";
                table.addRow({labels.at(&client), count(session, "id"), text(stage, "stage"), count(stage, "tiles"),
                              longest, count(stage, "overruns"), count(stage, "image_copies"),
                              text(stage, "fusion")});
            }
    return table.empty() ? std::string() : table.render();
}

std::string releasedSummary(const json& stats)
{
    const json* released = member(stats, "released_on_disconnect");
    if (!released || !released->is_object())
        return {};
    const auto counted = [&](const char* key, const char* noun) {
        const std::string n = count(*released, key);
        return fmt::format("{} {}{}", n, noun, n == "1" ? "" : "s");
    };
    return fmt::format("released when their client went away: {}, {}, {}\n", counted("clients", "client"),
                       counted("sessions", "session"), counted("buffers", "buffer"));
}

} // namespace

std::string statsTable(const json& stats)
{
    const json& clients = clientList(stats);
    std::string out = daemonSummary(stats) + "\n";
    if (clients.empty()) {
        out += "no clients connected\n";
    } else {
        const auto labels = clientLabels(clients);
        out += clientTable(clients) + "\n" + sessionTable(clients, labels);
        if (const std::string stages = stageTable(clients, labels); !stages.empty())
            out += "\n" + stages;
    }
    if (const std::string released = releasedSummary(stats); !released.empty())
        out += "\n" + released;
    return out;
}

} // namespace framecl::cli
