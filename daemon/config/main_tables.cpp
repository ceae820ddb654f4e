#include "config/main_tables.hpp"

#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join
#include <sys/un.h>

#include "config/table_reader.hpp"

namespace framecl::config {

namespace fs = std::filesystem;

namespace {

// Both sockets are Unix sockets, and the path must fit in sockaddr_un::sun_path with
// its terminating NUL (unix(7)); a longer one fails only at bind time, far from here.
constexpr std::size_t max_socket_path = sizeof(sockaddr_un::sun_path) - 1;

// (uid_t)-1 and (gid_t)-1 mean "no id" to chown(2) and friends, so they match nobody.
constexpr int64_t max_id = std::numeric_limits<uint32_t>::max() - 1;

std::string tooLongMessage(const fs::path& path)
{
    return fmt::format("'{}' is {} bytes; a Unix socket path must be at most {}", path.string(),
                       path.native().size(), max_socket_path);
}

void readSocketPath(const TableReader& daemon, std::string_view key, fs::path& path)
{
    const toml::node* node = daemon.find(key);
    if (!node) {
        if (path.native().size() > max_socket_path)
            daemon.file().reportDefault(daemon.keyPath(key),
                                        "the default " + tooLongMessage(path) +
                                            "; set a shorter path");
        return;
    }
    std::string written;
    if (!daemon.readNonEmptyString(key, written))
        return;
    if (written.find("://") != std::string::npos) {
        daemon.report(*node, key,
                      fmt::format("{} must be a filesystem path; framecld listens on ipc:// only",
                                  key));
        return;
    }
    const fs::path resolved = daemon.file().resolve(written);
    if (resolved.native().size() > max_socket_path) {
        daemon.report(*node, key, tooLongMessage(resolved));
        return;
    }
    path = resolved;
}

// gpu.priority_hint and a class's gpu_priority.
const std::initializer_list<std::pair<std::string_view, PriorityHint>> priority_levels = {
    {"high", PriorityHint::High}, {"normal", PriorityHint::Normal}, {"low", PriorityHint::Low}};

// Exactly one matcher, so that which class a client falls in never depends on the
// order in which the matchers are tried.
void checkOneMatcher(const TableReader& entry)
{
    std::vector<std::string_view> present;
    for (std::string_view matcher : {"match_name", "uid", "gid"})
        if (entry.find(matcher))
            present.push_back(matcher);
    if (present.empty())
        entry.reportTable("needs one of match_name, uid or gid");
    else if (present.size() > 1)
        entry.reportTable(fmt::format("has {}; exactly one of match_name, uid or gid is allowed",
                                      fmt::join(present, " and ")));
}

ClientClass readClientClass(FileContext& file, const toml::table& table, std::string prefix)
{
    const TableReader entry(file, table, std::move(prefix));
    entry.refuseUnknownKeys({"name", "match_name", "uid", "gid", "weight", "gpu_priority"});
    ClientClass client_class;
    client_class.where = file.locate(table.source());
    entry.requireKey("name");
    entry.readNonEmptyString("name", client_class.name);
    checkOneMatcher(entry);
    std::string match_name;
    if (entry.readNonEmptyString("match_name", match_name))
        client_class.match_name = match_name;
    uint32_t id = 0;
    if (entry.readInteger("uid", id, 0, max_id))
        client_class.uid = id;
    if (entry.readInteger("gid", id, 0, max_id))
        client_class.gid = id;
    entry.readInteger("weight", client_class.weight, 1, 1000);
    PriorityHint priority = PriorityHint::Normal;
    if (entry.readChoice("gpu_priority", priority, priority_levels))
        client_class.gpu_priority = priority;
    return client_class;
}

} // namespace

void readDaemonTable(FileContext& file, const toml::table& table, DaemonConfig& daemon)
{
    const TableReader reader(file, table, "daemon");
    reader.refuseUnknownKeys({"socket", "buffer_socket", "socket_group", "allowed_users",
                              "allowed_groups", "plugin_dirs", "kernel_dirs", "pipeline_dirs",
                              "cache_dir"});
    readSocketPath(reader, "socket", daemon.socket);
    readSocketPath(reader, "buffer_socket", daemon.buffer_socket);
    reader.readString("socket_group", daemon.socket_group);
    reader.readStringList("allowed_users", daemon.allowed_users);
    reader.readStringList("allowed_groups", daemon.allowed_groups);
    reader.readPathList("plugin_dirs", daemon.plugin_dirs);
    reader.readPathList("kernel_dirs", daemon.kernel_dirs);
    reader.readPathList("pipeline_dirs", daemon.pipeline_dirs);
    reader.readPath("cache_dir", daemon.cache_dir);
}

void readGpuTable(FileContext& file, const toml::table& table, GpuConfig& gpu)
{
    const TableReader reader(file, table, "gpu");
    reader.refuseUnknownKeys({"device", "perf_hint", "idle_perf_hint", "idle_after_ms",
                              "priority_hint", "kernel_budget_ms", "lanes", "recording",
                              "timestamps", "onchip_intermediates", "tuning", "tuning_budget_ms"});
    reader.readNonEmptyString("device", gpu.device);
    const std::initializer_list<std::pair<std::string_view, PerfHint>> perf_hints = {
        {"high", PerfHint::High}, {"normal", PerfHint::Normal}, {"low", PerfHint::Low}};
    reader.readChoice("perf_hint", gpu.perf_hint, perf_hints);
    reader.readChoice("idle_perf_hint", gpu.idle_perf_hint, perf_hints);
    reader.readInteger("idle_after_ms", gpu.idle_after_ms, 0, 3'600'000);
    reader.readChoice("priority_hint", gpu.priority_hint, priority_levels);
    // Guide §3.3: a dispatch should stay well under a display frame; a second is the
    // most that is still a budget rather than no budget.
    reader.readNumber("kernel_budget_ms", gpu.kernel_budget_ms, 0.0, 1000.0);
    // Two lanes are enough to fill one tile's tail with the next tile (gpu/context.hpp).
    reader.readInteger("lanes", gpu.lanes, 1, 2);
    reader.readChoice("recording", gpu.recording,
                      {{"auto", RecordingMode::Auto},
                       {"qcom", RecordingMode::Qcom},
                       {"khr", RecordingMode::Khr},
                       {"off", RecordingMode::Off}});
    reader.readChoice("timestamps", gpu.timestamps, {{"auto", TimestampSource::Auto}, {"host", TimestampSource::Host}});
    reader.readBool("onchip_intermediates", gpu.onchip_intermediates);
    reader.readChoice("tuning", gpu.tuning, {{"auto", Tuning::Auto}, {"off", Tuning::Off}});
    reader.readInteger("tuning_budget_ms", gpu.tuning_budget_ms, 1, 3'600'000);
}

void readLimitsTable(FileContext& file, const toml::table& table, Limits& limits)
{
    const TableReader reader(file, table, "limits");
    reader.refuseUnknownKeys({"max_clients", "max_sessions_per_client", "max_buffers_per_client",
                              "max_bytes_per_client", "max_inflight_per_client",
                              "max_frame_pixels", "max_fence_wait_ms"});
    reader.readInteger("max_clients", limits.max_clients, 1, 1024);
    reader.readInteger("max_sessions_per_client", limits.max_sessions_per_client, 1, 256);
    reader.readInteger("max_buffers_per_client", limits.max_buffers_per_client, 1, 4096);
    // One MiB holds a single small frame; a TiB is far past any board's memory.
    reader.readInteger("max_bytes_per_client", limits.max_bytes_per_client, int64_t{1} << 20,
                       int64_t{1} << 40);
    reader.readInteger("max_inflight_per_client", limits.max_inflight_per_client, 1, 64);
    reader.readInteger("max_frame_pixels", limits.max_frame_pixels, 1, int64_t{1} << 30);
    reader.readInteger("max_fence_wait_ms", limits.max_fence_wait_ms, 1, 600'000);
}

void readClientClasses(FileContext& file, const toml::array& array,
                       std::vector<ClientClass>& classes)
{
    for (std::size_t i = 0; i < array.size(); ++i) {
        const std::string prefix = fmt::format("client_class[{}]", i);
        if (const toml::table* table = tableElement(file, *array.get(i), prefix))
            classes.push_back(readClientClass(file, *table, prefix));
    }
}

} // namespace framecl::config
