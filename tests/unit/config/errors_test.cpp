// Bad files: each class of problem is reported on its own line, with the key and a
// message a user can act on.

#include <doctest/doctest.h>

#include "config_test_support.hpp"

namespace framecl::config::test {
namespace {

TEST_CASE("a TOML syntax error is reported with its line and column")
{
    const ConfigErrors errors = errorsOf("[gpu]\ndevice = \"auto\"\nperf_hint = high\n");
    INFO(errors.joined());
    REQUIRE(errors.problems.size() == 1);
    CHECK(errors.problems[0].starts_with("cfg.toml:3:13: syntax error: "));
}

TEST_CASE("a problem is one line whatever the file holds: control characters are escaped")
{
    // The config fuzzer's find (tests/fuzz/corpus/config/crash-d494d4ff...): toml++
    // quotes the input it stopped at, here a newline, and a quoted key may hold one.
    const ConfigErrors syntax = errorsOf("[gpu]\nkernel_budget_ms = i\n");
    REQUIRE(syntax.problems.size() == 1);
    CHECK(syntax.problems[0].find('\n') == std::string::npos);
    CHECK(contains(syntax.problems[0], "\\n"));

    const ConfigErrors key = errorsOf("[gpu]\n\"perf\\nhint\\u0001\" = 1\n");
    REQUIRE(key.problems.size() == 1);
    CHECK(key.problems[0].starts_with("cfg.toml:2:1: gpu.perf\\nhint\\x01: unknown key"));
}

TEST_CASE("an unknown key is reported with the closest known key")
{
    const ConfigErrors errors = errorsOf("[gpu]\ndevice = \"auto\"\nperf_hnit = \"high\"\n");
    INFO(errors.joined());
    const std::string problem = problemOnLine(errors, 3);
    CHECK(problem.starts_with("cfg.toml:3:1: gpu.perf_hnit: unknown key"));
    CHECK(contains(problem, "did you mean 'perf_hint'?"));
}

TEST_CASE("a key written without its unit suffix is pointed to the full key")
{
    const ConfigErrors errors = errorsOf("[gpu]\nkernel_budget = 4.0\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2), "gpu.kernel_budget: unknown key; did you mean 'kernel_budget_ms'?"));
}

TEST_CASE("an unknown key far from every known key gets no suggestion")
{
    const ConfigErrors errors = errorsOf("[limits]\n\nframes_per_second = 30\n");
    INFO(errors.joined());
    const std::string problem = problemOnLine(errors, 3);
    CHECK(contains(problem, "limits.frames_per_second: unknown key"));
    CHECK_FALSE(contains(problem, "did you mean"));
}

TEST_CASE("an unknown table is reported with the closest known table")
{
    const ConfigErrors errors = errorsOf("[daemon]\n\n[gpus]\ndevice = \"auto\"\n");
    INFO(errors.joined());
    const std::string problem = problemOnLine(errors, 3);
    CHECK(contains(problem, "gpus: unknown table [gpus]; did you mean 'gpu'?"));
}

TEST_CASE("an unknown array of tables is reported as such")
{
    const ConfigErrors errors = errorsOf("[[client]]\nname = \"a\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 1), "client: unknown table [[client]]"));
}

TEST_CASE("a value of the wrong type names the expected and the given type")
{
    const ConfigErrors errors = errorsOf("[limits]\nmax_clients = \"16\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2),
                   "limits.max_clients: expected an integer, got a string"));
}

TEST_CASE("a table given as a plain value is a type error")
{
    const ConfigErrors errors = errorsOf("gpu = \"adreno\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 1), "gpu: expected a table, got a string"));
}

TEST_CASE("a non-string element of a path list is reported with its index")
{
    const ConfigErrors errors = errorsOf("[daemon]\nkernel_dirs = [\n  \"/a\",\n  7,\n]\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 4),
                   "daemon.kernel_dirs[1]: expected a string, got an integer"));
}

TEST_CASE("an out-of-range integer is reported with the allowed range")
{
    const ConfigErrors errors = errorsOf("[gpu]\nidle_after_ms = 3600001\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2),
                   "gpu.idle_after_ms: must be between 0 and 3600000, got 3600001"));
}

TEST_CASE("a GPU has one or two lanes")
{
    const ConfigErrors errors = errorsOf("[gpu]\nlanes = 3\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2), "gpu.lanes: must be between 1 and 2, got 3"));
}

TEST_CASE("a client class's gpu_priority is one of the priority levels")
{
    const ConfigErrors errors = errorsOf("[[client_class]]\nname = \"preview\"\nmatch_name = \"p*\"\n"
                                         "gpu_priority = \"urgent\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 4),
                   "client_class[0].gpu_priority: 'urgent' is not allowed; expected one of high, normal, low"));
}

TEST_CASE("each limit is refused below its minimum")
{
    const ConfigErrors errors = errorsOf(R"([limits]
max_clients = 0
max_sessions_per_client = 0
max_buffers_per_client = 0
max_bytes_per_client = 1048575
max_inflight_per_client = 0
max_frame_pixels = 0
)");
    INFO(errors.joined());
    CHECK(errors.problems.size() == 6);
    CHECK(contains(problemOnLine(errors, 2), "limits.max_clients: must be between 1 and 1024"));
    CHECK(contains(problemOnLine(errors, 5),
                   "limits.max_bytes_per_client: must be between 1048576 and"));
    CHECK(contains(problemOnLine(errors, 7),
                   "limits.max_frame_pixels: must be between 1 and 1073741824"));
}

TEST_CASE("a kernel budget of zero or past a second is refused")
{
    const ConfigErrors errors = errorsOf("[gpu]\nkernel_budget_ms = 0.0\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2),
                   "gpu.kernel_budget_ms: must be greater than 0 and at most 1000, got 0"));
    CHECK(contains(errorsOf("[gpu]\nkernel_budget_ms = 1000.5\n").joined(), "cfg.toml:2:"));
    CHECK(contains(errorsOf("[gpu]\nkernel_budget_ms = nan\n").joined(), "cfg.toml:2:"));
}

TEST_CASE("a value outside the allowed set lists the allowed values")
{
    const ConfigErrors errors = errorsOf("[gpu]\n\nperf_hint = \"max\"\nrecording = \"cuda\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 3),
                   "gpu.perf_hint: 'max' is not allowed; expected one of high, normal, low"));
    CHECK(contains(problemOnLine(errors, 4),
                   "gpu.recording: 'cuda' is not allowed; expected one of auto, qcom, khr, off"));
}

TEST_CASE("a client class with no matcher is refused")
{
    const ConfigErrors errors = errorsOf("[[client_class]]\nname = \"a\"\nweight = 2\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 1),
                   "client_class[0]: needs one of match_name, uid or gid"));
}

TEST_CASE("a client class with two matchers is refused")
{
    const ConfigErrors errors = errorsOf(R"([[client_class]]
name = "a"
uid = 1

[[client_class]]
name = "b"
match_name = "cam*"
gid = 44
)");
    INFO(errors.joined());
    REQUIRE(errors.problems.size() == 1);
    CHECK(contains(problemOnLine(errors, 5),
                   "client_class[1]: has match_name and gid; exactly one of match_name, uid "
                   "or gid is allowed"));
}

TEST_CASE("a client class without a name is refused")
{
    const ConfigErrors errors = errorsOf("[[client_class]]\nuid = 1\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 1), "client_class[0]: missing required key 'name'"));
}

TEST_CASE("a client class weight out of range is refused")
{
    const ConfigErrors errors = errorsOf("[[client_class]]\nname = \"a\"\nuid = 1\nweight = 0\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 4),
                   "client_class[0].weight: must be between 1 and 1000, got 0"));
}

TEST_CASE("a socket URI is refused")
{
    const ConfigErrors errors = errorsOf("[daemon]\nsocket = \"tcp://0.0.0.0:5555\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2),
                   "daemon.socket: socket must be a filesystem path; framecld listens on "
                   "ipc:// only"));
}

TEST_CASE("a socket path too long for sockaddr_un is refused")
{
    const std::string path = "/run/" + std::string(103, 'x'); // 108 bytes
    const ConfigErrors errors = errorsOf("[daemon]\nbuffer_socket = \"" + path + "\"\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2),
                   "daemon.buffer_socket: '" + path +
                       "' is 108 bytes; a Unix socket path must be at most 107"));
}

TEST_CASE("a default socket path too long for sockaddr_un is refused")
{
    PathDefaults defaults = testDefaults();
    defaults.socket = "/run/" + std::string(103, 'x');
    auto result = parseConfig("", "cfg.toml", defaults);
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().joined());
    CHECK(result.error().joined().starts_with("cfg.toml: daemon.socket: the default '/run/x"));
}

TEST_CASE("a pipeline without stages is refused")
{
    const ConfigErrors errors = errorsOf(R"([[pipeline]]
name = "empty"
stages = []

[[pipeline]]
name = "none"
)");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 3),
                   "pipeline[0].stages: a pipeline needs at least one stage"));
    CHECK(contains(problemOnLine(errors, 5), "pipeline[1]: missing required key 'stages'"));
}

TEST_CASE("a stage without plugin is refused")
{
    const ConfigErrors errors = errorsOf(R"([[pipeline]]
name = "p"
stages = [
  { plugin = "color", op = "nv12_to_y" },
  { op = "sobel" },
]
)");
    INFO(errors.joined());
    REQUIRE(errors.problems.size() == 1);
    CHECK(contains(problemOnLine(errors, 5), "pipeline[0].stages[1]: missing required key 'plugin'"));
}

TEST_CASE("a stage parameter of an unsupported type is refused")
{
    const ConfigErrors errors = errorsOf(R"([[pipeline]]
name = "p"
stages = [
  { plugin = "blur", kernel = [1, "two"], shape = { w = 3 } },
]
)");
    INFO(errors.joined());
    CHECK(contains(errors.joined(),
                   "pipeline[0].stages[0].kernel[1]: expected a number, got a string"));
    CHECK(contains(errors.joined(), "pipeline[0].stages[0].shape: expected a boolean, an "
                                    "integer, a float, a string or an array of numbers, got "
                                    "a table"));
    CHECK(contains(problemOnLine(errors, 4), "pipeline[0].stages[0]"));
}

TEST_CASE("the pipeline name copy is reserved")
{
    const ConfigErrors errors =
        errorsOf("[[pipeline]]\nname = \"copy\"\nstages = [{ plugin = \"color\" }]\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2),
                   "pipeline[0].name: 'copy' is reserved for the daemon's built-in pipeline"));
}

TEST_CASE("a pipeline name outside [A-Za-z0-9_.-] is refused")
{
    const ConfigErrors errors =
        errorsOf("[[pipeline]]\nname = \"edge map\"\nstages = [{ plugin = \"sobel\" }]\n");
    INFO(errors.joined());
    CHECK(contains(problemOnLine(errors, 2), "pipeline[0].name: 'edge map' may hold only"));
}

TEST_CASE("a pipeline name used twice in one file names both places")
{
    const ConfigErrors errors = errorsOf(R"([[pipeline]]
name = "edges"
stages = [{ plugin = "sobel" }]

[[pipeline]]
name = "edges"
stages = [{ plugin = "sobel" }]
)");
    INFO(errors.joined());
    REQUIRE(errors.problems.size() == 1);
    CHECK(contains(problemOnLine(errors, 6), "pipeline[1].name: pipeline 'edges' is already "
                                             "defined at cfg.toml:1:"));
}

TEST_CASE("every problem of a file is reported, in the order of their lines")
{
    const ConfigErrors errors = errorsOf(R"([gpu]
perf_hint = "fast"
idle_after_ms = -1
recodring = "off"

[limits]
max_client = 4
)");
    INFO(errors.joined());
    REQUIRE(errors.problems.size() == 4);
    CHECK(errors.problems[0].starts_with("cfg.toml:2:13: gpu.perf_hint: "));
    CHECK(errors.problems[1].starts_with("cfg.toml:3:17: gpu.idle_after_ms: "));
    CHECK(errors.problems[2] ==
          "cfg.toml:4:1: gpu.recodring: unknown key; did you mean 'recording'?");
    CHECK(errors.problems[3] ==
          "cfg.toml:7:1: limits.max_client: unknown key; did you mean 'max_clients'?");
}

TEST_CASE("a config file that cannot be read is reported with the reason")
{
    TempDir dir;
    auto result = loadConfigFile(dir.path() / "missing.toml", testDefaults());
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().joined() ==
          (dir.path() / "missing.toml").string() + ": cannot read: No such file or directory");
}

} // namespace
} // namespace framecl::config::test
