// framecld --self-test and --list-devices as a board integrator runs them: a real
// daemon process on the test device (PoCL in CI), its report and its exit status.
#include <filesystem>
#include <map>
#include <set>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "temp_dir.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using nlohmann::json;

namespace {

std::string daemonPath() { return requireEnv("FRAMECL_DAEMON"); }
std::string sourceRoot() { return requireEnv("FRAMECL_SOURCE_ROOT"); }

// The shipped filter plugins: docs/filters.md, "Plugins available now".
const std::set<std::string> shipped_plugins = {"bayer", "demosaic", "color", "ccm", "tone", "box",
                                               "epsilon", "sobel", "bicubic", "convolve", "meanshift", "blockmatch"};

// A config whose caches stay in `dir`, with `extra` in its [gpu] table; `plugin_dirs`
// replaces the build's plugins where given.
std::string testConfig(const TempDir& dir, const std::string& extra = "", const std::string& plugin_dirs = "")
{
    return "[daemon]\n"
           "kernel_dirs = [\"" + sourceRoot() + "/kernels\"]\n"
           "cache_dir = \"" + (dir / "cache").string() + "\"\n" +
           (plugin_dirs.empty() ? "" : "plugin_dirs = [\"" + plugin_dirs + "\"]\n") +
           "pipeline_dirs = []\n"
           "[gpu]\n" + extra;
}

json selfTest(const TempDir& dir, const std::filesystem::path& config, int expected_status)
{
    auto run = runToCompletion({daemonPath(), "--config", config.string(), "--self-test", "--json"}, dir.path(),
                               std::chrono::seconds(600));
    INFO(run.err);
    INFO(run.out);
    REQUIRE(run.status.exited);
    REQUIRE(run.status.code == expected_status);
    return json::parse(run.out);
}

// The checks of `report` in `area`, by name.
std::map<std::string, json> checksOf(const json& report, const std::string& area)
{
    std::map<std::string, json> found;
    for (const json& check : report.at("checks"))
        if (check.at("area") == area)
            found[check.at("name").get<std::string>()] = check;
    return found;
}

std::string outcome(const std::map<std::string, json>& checks, const std::string& name)
{
    const auto found = checks.find(name);
    return found == checks.end() ? "absent" : found->second.at("outcome").get<std::string>();
}

} // namespace

TEST_CASE("--self-test passes on the test device, checks every shipped plugin, and says what PoCL lacks")
{
    TempDir dir;
    const json report = selfTest(dir, dir.write("framecld.toml", testConfig(dir)), 0);
    INFO(report.dump(2));
    CHECK(report.at("failed") == 0);
    CHECK(report.at("passed").get<int>() > 20);

    const auto device = checksOf(report, "device");
    CHECK(outcome(device, "open") == "passed");
    CHECK(outcome(device, "profiling timestamps") == "passed");
    CHECK(outcome(device, "images") == "passed");
    const auto import = checksOf(report, "import");
    CHECK(outcome(import, "memfd") == "passed");
    CHECK(outcome(import, "qcom-dmabuf") == "not offered");
    const auto recording = checksOf(report, "recording");
    CHECK(outcome(recording, "off") == "passed");
    CHECK(outcome(recording, "khr") == "passed"); // PoCL 3.1 has cl_khr_command_buffer
    CHECK(outcome(recording, "qcom") == "not offered");
    CHECK(outcome(checksOf(report, "scheduling"), "fair queue") == "passed");

    // Every shipped plugin, each in more than one variant where it has variants.
    std::set<std::string> plugins;
    for (const auto& named : checksOf(report, "filters")) {
        const json& check = named.second; // not a structured binding: clang 14 cannot capture one
        CHECK_MESSAGE(check.at("outcome") == "passed", check.dump());
        plugins.insert(named.first.substr(0, named.first.find(' ')));
    }
    CHECK(plugins == shipped_plugins);
    CHECK(outcome(checksOf(report, "filters"), "box direct") == "passed");
    CHECK(outcome(checksOf(report, "filters"), "sobel image") == "passed");
}

TEST_CASE("--self-test on the host's clock passes, and says the device's timestamps are not used")
{
    TempDir dir;
    const json report = selfTest(dir, dir.write("framecld.toml", testConfig(dir, "timestamps = \"host\"\n")), 0);
    INFO(report.dump(2));
    const auto device = checksOf(report, "device");
    CHECK(outcome(device, "profiling timestamps") == "not offered");
    CHECK(device.at("profiling timestamps").at("detail").get<std::string>().find("host's clock") != std::string::npos);
    CHECK(outcome(checksOf(report, "scheduling"), "fair queue") == "passed");
    CHECK(outcome(checksOf(report, "recording"), "khr") == "passed");
}

TEST_CASE("--self-test without the plugins fails their checks, says why, and exits 1")
{
    TempDir dir;
    std::filesystem::create_directories(dir / "no-plugins");
    const auto config = dir.write("framecld.toml", testConfig(dir, "", (dir / "no-plugins").string()));
    auto run = runToCompletion({daemonPath(), "--config", config.string(), "--self-test"}, dir.path(),
                               std::chrono::seconds(300));
    INFO(run.err);
    REQUIRE(run.status.exited);
    CHECK(run.status.code == 1);
    CHECK(run.out.find("framecld self-test on ") == 0);
    CHECK(run.out.find("FAILED") != std::string::npos);
    CHECK(run.out.find("box") != std::string::npos);
    // The memfd copy needs no plugin: it still passes.
    CHECK(run.out.find("  memfd") != std::string::npos);
    CHECK(run.out.find(" failed, ") != std::string::npos);
}

TEST_CASE("--list-devices needs no config file: a framecld outside its build tree, with none installed")
{
    // The binary copied out of the build tree takes the install paths, where CI has
    // installed no config (the packages' go to /etc, this build's prefix is /usr/local).
    TempDir dir;
    const auto copy = dir / "framecld";
    std::filesystem::copy_file(daemonPath(), copy);
    std::filesystem::permissions(copy, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
    auto run = runToCompletion({copy.string(), "--list-devices"}, dir.path());
    INFO(run.err);
    CHECK(run.status.code == 0);
    CHECK(run.out.find("device 0: ") == 0);
    CHECK(run.out.find("  timing:") != std::string::npos);
    CHECK(run.err.find("cannot read") == std::string::npos);
}
