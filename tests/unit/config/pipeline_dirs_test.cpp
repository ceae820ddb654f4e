// The files of pipeline_dirs: read in order, holding pipelines only.

#include <doctest/doctest.h>

#include "config_test_support.hpp"

namespace framecl::config::test {
namespace {

namespace fs = std::filesystem;

std::string pipelineFile(std::string_view name)
{
    return "[[pipeline]]\nname = \"" + std::string(name) +
           "\"\nstages = [{ plugin = \"sobel\" }]\n";
}

std::vector<std::string> namesOf(const Config& config)
{
    std::vector<std::string> names;
    for (const Pipeline& pipeline : config.pipelines)
        names.push_back(pipeline.name);
    return names;
}

TEST_CASE("pipeline directories are read after the main file, each in name order")
{
    TempDir dir;
    dir.write("a.d/20-second.toml", pipelineFile("a-second"));
    dir.write("a.d/10-first.toml", pipelineFile("a-first"));
    dir.write("a.d/notes.txt", "not toml");
    dir.write("b.d/00-last.toml", pipelineFile("b-last"));
    const fs::path file = dir.write(
        "framecld.toml", "[daemon]\npipeline_dirs = [\"a.d\", \"b.d\"]\n" + pipelineFile("main"));
    auto result = loadConfigFile(file, testDefaults());
    INFO((result ? std::string() : result.error().joined()));
    REQUIRE(result.has_value());
    CHECK(namesOf(*result) ==
          std::vector<std::string>{"main", "a-first", "a-second", "b-last"});
    CHECK(result->pipelines[1].where.file == dir.path() / "a.d/10-first.toml");
    CHECK(result->pipelines[1].where.line == 1);
}

TEST_CASE("a file in a pipeline directory with a key other than pipeline is refused")
{
    TempDir dir;
    const fs::path bad =
        dir.write("p.d/edges.toml", pipelineFile("edges") + "\n[gpu]\ndevice = \"x\"\n");
    const fs::path file = dir.write("framecld.toml", "[daemon]\npipeline_dirs = [\"p.d\"]\n");
    auto result = loadConfigFile(file, testDefaults());
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().joined());
    REQUIRE(result.error().problems.size() == 1);
    CHECK(result.error().problems[0] ==
          bad.string() +
              ":5:2: gpu: a file in a pipeline directory may hold only [[pipeline]] tables");
}

TEST_CASE("a pipeline name already used by the main file is refused in a pipeline directory")
{
    TempDir dir;
    const fs::path other = dir.write("p.d/edges.toml", "\n" + pipelineFile("edges"));
    const fs::path file = dir.write("framecld.toml", "[daemon]\npipeline_dirs = [\"p.d\"]\n\n" +
                                                         pipelineFile("edges"));
    auto result = loadConfigFile(file, testDefaults());
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().joined());
    REQUIRE(result.error().problems.size() == 1);
    CHECK(result.error().problems[0].starts_with(other.string() + ":3:8: pipeline[0].name: "));
    CHECK(contains(result.error().problems[0], "already defined at " + file.string() + ":4:1"));
}

TEST_CASE("a syntax error in a pipeline directory names that file")
{
    TempDir dir;
    const fs::path bad = dir.write("p.d/bad.toml", "[[pipeline]]\nname = \n");
    const fs::path file = dir.write("framecld.toml", "[daemon]\npipeline_dirs = [\"p.d\"]\n");
    auto result = loadConfigFile(file, testDefaults());
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().joined());
    CHECK(result.error().problems[0].starts_with(bad.string() + ":2:"));
}

TEST_CASE("a pipeline directory that does not exist is skipped")
{
    TempDir dir;
    const fs::path file = dir.write("framecld.toml", "[daemon]\npipeline_dirs = [\"none.d\"]\n");
    auto result = loadConfigFile(file, testDefaults());
    INFO((result ? std::string() : result.error().joined()));
    REQUIRE(result.has_value());
    CHECK(result->pipelines.empty());
}

TEST_CASE("a pipeline directory that is not a directory is an error")
{
    TempDir dir;
    const fs::path not_dir = dir.write("file.d", "");
    const fs::path file = dir.write("framecld.toml", "[daemon]\npipeline_dirs = [\"file.d\"]\n");
    auto result = loadConfigFile(file, testDefaults());
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().joined() ==
          not_dir.string() + ": cannot read pipeline directory: Not a directory");
}

TEST_CASE("the default pipeline directories are read when the file names none")
{
    TempDir dir;
    dir.write("default.d/edges.toml", pipelineFile("edges"));
    PathDefaults defaults = testDefaults();
    defaults.pipeline_dirs = {dir.path() / "default.d"};
    auto result = parseConfig("", "cfg.toml", defaults);
    REQUIRE(result.has_value());
    CHECK(namesOf(*result) == std::vector<std::string>{"edges"});
}

} // namespace
} // namespace framecl::config::test
