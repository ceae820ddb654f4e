#pragma once
// The validated configuration of framecld: one TOML file plus the `*.toml` files in
// the pipeline directories. Every key of docs/configuration.md is parsed and checked here, even
// where the feature that uses it lands later, so a config that passes
// `framecld --check-config` today keeps passing.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <sys/types.h>

namespace framecl::config {

// Where a value came from, for error messages: "pipelines.d/edges.toml:12:5".
struct SourceLocation {
    std::filesystem::path file;
    uint32_t line = 0;
    uint32_t column = 0;
};

enum class PerfHint { High, Normal, Low };
enum class PriorityHint { High, Normal, Low };
enum class RecordingMode { Auto, Qcom, Khr, Off };
enum class Tuning { Auto, Off };
enum class TimestampSource { Auto, Host };

struct DaemonConfig {
    std::filesystem::path socket;
    std::filesystem::path buffer_socket;
    std::string socket_group; // empty: the daemon's own group
    std::vector<std::string> allowed_users;  // names or numeric uids; empty: anyone
    std::vector<std::string> allowed_groups; // names or numeric gids
    std::vector<std::filesystem::path> plugin_dirs;
    std::vector<std::filesystem::path> kernel_dirs;
    std::vector<std::filesystem::path> pipeline_dirs;
    std::filesystem::path cache_dir;
};

struct GpuConfig {
    std::string device = "auto"; // "auto" or a device-name substring
    PerfHint perf_hint = PerfHint::High;
    PerfHint idle_perf_hint = PerfHint::Low;
    uint32_t idle_after_ms = 2000;
    PriorityHint priority_hint = PriorityHint::Low;
    double kernel_budget_ms = 8.0;
    uint32_t lanes = 2; // in-order queues the tiles of a replay without a recording alternate between
    RecordingMode recording = RecordingMode::Auto;
    // Where GPU work is timed from (gpu/timestamps.hpp): auto, the device's profiling
    // timestamps where the check at start finds them sound; host, the host's clock.
    TimestampSource timestamps = TimestampSource::Auto;
    bool onchip_intermediates = true;
    Tuning tuning = Tuning::Auto;
    uint32_t tuning_budget_ms = 2000; // per stage: candidates start only while under it
};

struct Limits {
    uint32_t max_clients = 16;
    uint32_t max_sessions_per_client = 8;
    uint32_t max_buffers_per_client = 64;
    uint64_t max_bytes_per_client = 512ull << 20;
    uint32_t max_inflight_per_client = 4;
    uint64_t max_frame_pixels = 32ull << 20;
    // A frame still waiting for a fence this long after its Submit arrived fails
    // (docs/architecture.md, "Fences").
    uint32_t max_fence_wait_ms = 15000;
};

// A scheduling class; a client matches by the name it gives at Hello (a glob), or by
// its uid or gid. Exactly one matcher is set.
struct ClientClass {
    std::string name;
    std::optional<std::string> match_name;
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    uint32_t weight = 1;
    // The priority of the queue its clients' sessions run on, where the device offers
    // per-queue priorities (cl_khr_priority_hints); none: the daemon's, gpu.priority_hint.
    std::optional<PriorityHint> gpu_priority;
    SourceLocation where;
};

// A stage parameter as written; the plugin's schema checks it when plugins load.
using ParameterValue = std::variant<bool, int64_t, double, std::string, std::vector<double>>;

struct StageParameter {
    std::string key;
    ParameterValue value;
    SourceLocation where;
};

struct Stage {
    std::string plugin;
    std::vector<StageParameter> parameters;
    SourceLocation where;
};

struct Pipeline {
    std::string name;
    std::vector<Stage> stages;
    bool fuse = true; // fuse pointwise stages (docs/architecture.md, "Fusion")
    SourceLocation where;
};

struct Config {
    std::filesystem::path file; // the main file, absolute
    DaemonConfig daemon;
    GpuConfig gpu;
    Limits limits;
    std::vector<ClientClass> client_classes;
    std::vector<Pipeline> pipelines; // main file first, then pipeline_dirs in order
};

// Defaults for the path keys: the install paths, or the build tree's when the binary
// runs uninstalled (see default_paths.hpp).
struct PathDefaults {
    std::filesystem::path socket;
    std::filesystem::path buffer_socket;
    std::vector<std::filesystem::path> plugin_dirs;
    std::vector<std::filesystem::path> kernel_dirs;
    std::vector<std::filesystem::path> pipeline_dirs;
    std::filesystem::path cache_dir;
};

// Every problem found, each a line "file:line:column: key: what is wrong".
struct ConfigErrors {
    std::vector<std::string> problems;
    std::string joined() const; // one problem per line
};

} // namespace framecl::config
