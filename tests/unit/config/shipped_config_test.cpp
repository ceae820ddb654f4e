// The config files shipped in config/ load as they are.

#include <cstdlib>

#include <doctest/doctest.h>

#include "config_test_support.hpp"

namespace framecl::config::test {
namespace {

namespace fs = std::filesystem;

fs::path sourceRoot()
{
    const char* root = std::getenv("FRAMECL_SOURCE_ROOT");
    REQUIRE_MESSAGE(root != nullptr, "FRAMECL_SOURCE_ROOT is not set; run through meson test");
    return root;
}

TEST_CASE("the shipped framecld.toml and pipelines.d load")
{
    const fs::path config_dir = sourceRoot() / "config";
    PathDefaults defaults = testDefaults();
    defaults.pipeline_dirs = {config_dir / "pipelines.d"};
    auto result = loadConfigFile(config_dir / "framecld.toml", defaults);
    INFO((result ? std::string() : result.error().joined()));
    REQUIRE(result.has_value());
    // The path keys are left to the built-in defaults (see the file's comment).
    CHECK(result->daemon.socket == defaults.socket);
    CHECK(result->daemon.pipeline_dirs == defaults.pipeline_dirs);
    CHECK(result->gpu.device == "auto");
    REQUIRE(result->pipelines.size() == 6);
    CHECK(result->pipelines[0].name == "luma");
    CHECK(result->pipelines[0].stages.at(0).plugin == "color");
    // pipelines.d in name order
    CHECK(result->pipelines[1].name == "camera-isp");
    CHECK(result->pipelines[1].stages.size() == 5);
    CHECK(result->pipelines[2].name == "camera-isp-rgb");
    CHECK(result->pipelines[2].stages.size() == 4);
    CHECK(result->pipelines[3].name == "camera-prep");
    CHECK(result->pipelines[3].stages.size() == 2);
    CHECK(result->pipelines[4].name == "denoise-edges");
    CHECK(result->pipelines[4].stages.size() == 3);
    CHECK(result->pipelines[5].name == "edges");
    CHECK(result->pipelines[5].stages.size() == 3);
}

} // namespace
} // namespace framecl::config::test
