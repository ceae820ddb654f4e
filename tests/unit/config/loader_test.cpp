// Good files: every key reaches the structs, defaults fill the gaps, relative paths
// resolve against the file.

#include <doctest/doctest.h>

#include "config_test_support.hpp"

namespace framecl::config::test {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view full_file = R"([daemon]
socket = "/run/cam/framecl.sock"
buffer_socket = "/run/cam/buffers.sock"
socket_group = "camera"
allowed_users = ["cam", "1000"]
allowed_groups = ["video"]
plugin_dirs = ["/opt/a/plugins", "/opt/b/plugins"]
kernel_dirs = ["/opt/a/kernels"]
pipeline_dirs = []
cache_dir = "/var/cache/cam"

[gpu]
device = "Adreno"
perf_hint = "normal"
idle_perf_hint = "high"
idle_after_ms = 500
priority_hint = "high"
kernel_budget_ms = 4.5
lanes = 1
recording = "khr"
onchip_intermediates = false
tuning = "off"
tuning_budget_ms = 30000

[limits]
max_clients = 3
max_sessions_per_client = 2
max_buffers_per_client = 12
max_bytes_per_client = 2097152
max_inflight_per_client = 5
max_frame_pixels = 1000000

[[client_class]]
name = "preview"
match_name = "camera-preview*"
weight = 4
gpu_priority = "high"

[[client_class]]
name = "service"
uid = 1001

[[client_class]]
name = "video"
gid = 44
weight = 1000

[[pipeline]]
name = "edges"
stages = [
  { plugin = "color", op = "nv12_to_y" },
  { plugin = "blur", radius = 4, sigma = 1.5, normalize = true, kernel = [1, 2.5, 1] },
]
)";

Config loadFull()
{
    auto result = parseConfig(full_file, "/etc/cam/cfg.toml", testDefaults());
    INFO((result ? std::string() : result.error().joined()));
    REQUIRE(result.has_value());
    return *result;
}

TEST_CASE("a full file sets every key of [daemon]")
{
    const Config config = loadFull();
    CHECK(config.file == "/etc/cam/cfg.toml");
    const DaemonConfig& daemon = config.daemon;
    CHECK(daemon.socket == "/run/cam/framecl.sock");
    CHECK(daemon.buffer_socket == "/run/cam/buffers.sock");
    CHECK(daemon.socket_group == "camera");
    CHECK(daemon.allowed_users == std::vector<std::string>{"cam", "1000"});
    CHECK(daemon.allowed_groups == std::vector<std::string>{"video"});
    CHECK(daemon.plugin_dirs == std::vector<fs::path>{"/opt/a/plugins", "/opt/b/plugins"});
    CHECK(daemon.kernel_dirs == std::vector<fs::path>{"/opt/a/kernels"});
    CHECK(daemon.pipeline_dirs.empty());
    CHECK(daemon.cache_dir == "/var/cache/cam");
}

TEST_CASE("a full file sets every key of [gpu] and [limits]")
{
    const Config config = loadFull();
    const GpuConfig& gpu = config.gpu;
    CHECK(gpu.device == "Adreno");
    CHECK(gpu.perf_hint == PerfHint::Normal);
    CHECK(gpu.idle_perf_hint == PerfHint::High);
    CHECK(gpu.idle_after_ms == 500);
    CHECK(gpu.priority_hint == PriorityHint::High);
    CHECK(gpu.kernel_budget_ms == 4.5);
    CHECK(gpu.lanes == 1);
    CHECK(gpu.recording == RecordingMode::Khr);
    CHECK(gpu.onchip_intermediates == false);
    CHECK(gpu.tuning == Tuning::Off);
    CHECK(gpu.tuning_budget_ms == 30000);
    const Limits& limits = config.limits;
    CHECK(limits.max_clients == 3);
    CHECK(limits.max_sessions_per_client == 2);
    CHECK(limits.max_buffers_per_client == 12);
    CHECK(limits.max_bytes_per_client == 2097152);
    CHECK(limits.max_inflight_per_client == 5);
    CHECK(limits.max_frame_pixels == 1000000);
}

TEST_CASE("a full file sets every client class with its one matcher")
{
    const Config config = loadFull();
    REQUIRE(config.client_classes.size() == 3);
    const ClientClass& preview = config.client_classes[0];
    CHECK(preview.name == "preview");
    CHECK(preview.match_name == "camera-preview*");
    CHECK_FALSE(preview.uid.has_value());
    CHECK_FALSE(preview.gid.has_value());
    CHECK(preview.weight == 4);
    CHECK(preview.gpu_priority == PriorityHint::High);
    CHECK(preview.where.line == 33);
    const ClientClass& service = config.client_classes[1];
    CHECK(service.uid == uid_t{1001});
    CHECK_FALSE(service.match_name.has_value());
    CHECK(service.weight == 1);
    CHECK_FALSE(service.gpu_priority.has_value());
    const ClientClass& video = config.client_classes[2];
    CHECK(video.gid == gid_t{44});
    CHECK(video.weight == 1000);
}

TEST_CASE("a full file keeps each stage parameter with its type and line")
{
    const Config config = loadFull();
    REQUIRE(config.pipelines.size() == 1);
    const Pipeline& pipeline = config.pipelines[0];
    CHECK(pipeline.name == "edges");
    CHECK(pipeline.where.line == 48);
    REQUIRE(pipeline.stages.size() == 2);
    CHECK(pipeline.stages[0].plugin == "color");
    REQUIRE(pipeline.stages[0].parameters.size() == 1);
    CHECK(pipeline.stages[0].parameters[0].key == "op");
    CHECK(std::get<std::string>(pipeline.stages[0].parameters[0].value) == "nv12_to_y");

    const Stage& blur = pipeline.stages[1];
    CHECK(blur.plugin == "blur");
    CHECK(blur.where.file == "/etc/cam/cfg.toml");
    CHECK(blur.where.line == 52);
    REQUIRE(blur.parameters.size() == 4);
    // toml++ keeps a table's keys sorted.
    CHECK(blur.parameters[0].key == "kernel");
    CHECK(std::get<std::vector<double>>(blur.parameters[0].value) ==
          std::vector<double>{1.0, 2.5, 1.0});
    CHECK(blur.parameters[1].key == "normalize");
    CHECK(std::get<bool>(blur.parameters[1].value) == true);
    CHECK(blur.parameters[2].key == "radius");
    CHECK(std::get<int64_t>(blur.parameters[2].value) == 4);
    CHECK(blur.parameters[3].key == "sigma");
    CHECK(std::get<double>(blur.parameters[3].value) == 1.5);
    CHECK(blur.parameters[3].where.line == 52);
}

TEST_CASE("keys left out keep their defaults")
{
    auto result = parseConfig("", "cfg.toml", testDefaults());
    REQUIRE(result.has_value());
    const PathDefaults defaults = testDefaults();
    CHECK(result->daemon.socket == defaults.socket);
    CHECK(result->daemon.buffer_socket == defaults.buffer_socket);
    CHECK(result->daemon.socket_group.empty());
    CHECK(result->daemon.allowed_users.empty());
    CHECK(result->daemon.plugin_dirs == defaults.plugin_dirs);
    CHECK(result->daemon.kernel_dirs == defaults.kernel_dirs);
    CHECK(result->daemon.pipeline_dirs == defaults.pipeline_dirs);
    CHECK(result->daemon.cache_dir == defaults.cache_dir);
    CHECK(result->gpu.device == "auto");
    CHECK(result->gpu.perf_hint == PerfHint::High);
    CHECK(result->gpu.idle_perf_hint == PerfHint::Low);
    CHECK(result->gpu.idle_after_ms == 2000);
    CHECK(result->gpu.kernel_budget_ms == 8.0);
    CHECK(result->gpu.recording == RecordingMode::Auto);
    CHECK(result->limits.max_clients == 16);
    CHECK(result->limits.max_bytes_per_client == 536870912);
    CHECK(result->client_classes.empty());
    CHECK(result->pipelines.empty());
}

TEST_CASE("keys left out of a present table keep their defaults")
{
    auto result = parseConfig("[daemon]\nsocket_group = \"video\"\n[gpu]\nrecording = \"off\"\n",
                              "cfg.toml", testDefaults());
    REQUIRE(result.has_value());
    CHECK(result->daemon.socket == testDefaults().socket);
    CHECK(result->daemon.cache_dir == testDefaults().cache_dir);
    CHECK(result->gpu.recording == RecordingMode::Off);
    CHECK(result->gpu.tuning == Tuning::Auto);
    CHECK(result->gpu.tuning_budget_ms == 2000);
}

TEST_CASE("a whole-number kernel budget is accepted")
{
    auto result = parseConfig("[gpu]\nkernel_budget_ms = 16\n", "cfg.toml", testDefaults());
    REQUIRE(result.has_value());
    CHECK(result->gpu.kernel_budget_ms == 16.0);
}

TEST_CASE("relative paths resolve against the directory of the file")
{
    TempDir dir;
    const fs::path file = dir.write("etc/framecld.toml", R"([daemon]
socket = "run/framecl.sock"
buffer_socket = "../run/buffers.sock"
plugin_dirs = ["plugins", "/abs/plugins"]
kernel_dirs = ["./kernels"]
pipeline_dirs = ["pipelines.d"]
cache_dir = "../cache"
)");
    auto result = loadConfigFile(file, testDefaults());
    INFO((result ? std::string() : result.error().joined()));
    REQUIRE(result.has_value());
    const fs::path etc = dir.path() / "etc";
    CHECK(result->file == file);
    CHECK(result->daemon.socket == etc / "run/framecl.sock");
    CHECK(result->daemon.buffer_socket == dir.path() / "run/buffers.sock");
    CHECK(result->daemon.plugin_dirs == std::vector<fs::path>{etc / "plugins", "/abs/plugins"});
    CHECK(result->daemon.kernel_dirs == std::vector<fs::path>{etc / "kernels"});
    CHECK(result->daemon.pipeline_dirs == std::vector<fs::path>{etc / "pipelines.d"});
    CHECK(result->daemon.cache_dir == dir.path() / "cache");
}

TEST_CASE("a relative config file name anchors paths at the working directory")
{
    auto result = parseConfig("[daemon]\ncache_dir = \"cache\"\n", "cfg.toml", testDefaults());
    REQUIRE(result.has_value());
    CHECK(result->file == fs::current_path() / "cfg.toml");
    CHECK(result->daemon.cache_dir == fs::current_path() / "cache");
}

} // namespace
} // namespace framecl::config::test
