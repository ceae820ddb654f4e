// Pipelines checked against the plugins when the config loads: each problem names the
// file, the line, the pipeline, the stage and the key, and leaves the other pipelines
// offered.
#include <doctest/doctest.h>

#include "pipeline/catalog.hpp"
#include "pipeline_test_support.hpp"

using namespace framecl;

namespace {

pipeline::PipelineSet withoutDevice(const std::string& pipelines_toml)
{
    return pipeline::loadPipelineSet(framecl::test::pipelineConfig(pipelines_toml), nullptr, nullptr);
}

// (pipelineConfig puts four lines of [daemon] before the text given, so "[[pipeline]]"
// below is line 5 of test.toml.)

// The one problem about the config's pipelines (plugins refused while loading the test
// plugin directory are not the subject here).
std::string pipelineProblem(const pipeline::PipelineSet& set)
{
    REQUIRE(set.catalog.problems.size() == 1);
    return set.catalog.problems[0];
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("copy is offered first whatever the config says")
{
    const auto set = withoutDevice("");
    REQUIRE_FALSE(set.catalog.pipelines.empty());
    CHECK(set.catalog.pipelines[0]->name == "copy");
    CHECK(set.catalog.problems.empty());
}

TEST_CASE("a valid pipeline is resolved with its stages labelled by plugin and parameters")
{
    const auto set = withoutDevice("[[pipeline]]\nname = \"p\"\n"
                                   "stages = [ { plugin = \"color\", op = \"abgr_to_y\" }, { plugin = \"offset\", amount = 3 } ]\n");
    CHECK(set.catalog.problems.empty());
    const auto p = set.catalog.find("p");
    REQUIRE(p);
    REQUIRE(p->stages.size() == 2);
    CHECK(p->stages[0].label == "color op=abgr_to_y");
    CHECK(p->stages[1].label == "offset amount=3");
}

TEST_CASE("an unknown plugin names its line and the closest plugin")
{
    const auto set = withoutDevice("[[pipeline]]\nname = \"p\"\nstages = [\n  { plugin = \"ofset\" },\n]\n");
    const std::string problem = pipelineProblem(set);
    CHECK(contains(problem, "test.toml:8:"));
    CHECK(contains(problem, "pipeline 'p', stage 1: unknown plugin 'ofset'; did you mean 'offset'?"));
    CHECK_FALSE(set.catalog.find("p"));
}

TEST_CASE("an unknown parameter names its line, the stage and the closest key")
{
    const auto set = withoutDevice("[[pipeline]]\nname = \"p\"\nstages = [\n  { plugin = \"offset\", amuont = 3 },\n]\n");
    const std::string problem = pipelineProblem(set);
    CHECK(contains(problem, "test.toml:8:"));
    CHECK(contains(problem, "pipeline 'p', stage 1 (offset)"));
    CHECK(contains(problem, "amuont"));
    CHECK(contains(problem, "did you mean 'amount'?"));
}

TEST_CASE("an out-of-range value names its line, the key and the range")
{
    const auto set = withoutDevice("[[pipeline]]\nname = \"p\"\nstages = [\n  { plugin = \"offset\", amount = 300 },\n]\n");
    const std::string problem = pipelineProblem(set);
    CHECK(contains(problem, "test.toml:8:"));
    CHECK(contains(problem, "amount"));
    CHECK(contains(problem, "255"));
    CHECK(contains(problem, "300"));
}

TEST_CASE("formats that do not chain name the stage that refuses and its line")
{
    const auto set = withoutDevice("[[pipeline]]\nname = \"p\"\nstages = [\n  { plugin = \"offset\" },\n"
                                   "  { plugin = \"color\", op = \"abgr_to_y\" },\n]\n");
    const std::string problem = pipelineProblem(set);
    CHECK(contains(problem, "test.toml:9:"));
    CHECK(contains(problem, "formats do not chain at stage 2 (color op=abgr_to_y)"));
    CHECK(contains(problem, "ABGR8888"));
}

TEST_CASE("a pipeline with a problem is left out and the others are offered")
{
    const auto set = withoutDevice("[[pipeline]]\nname = \"bad\"\nstages = [ { plugin = \"nope\" } ]\n"
                                   "[[pipeline]]\nname = \"good\"\nstages = [ { plugin = \"offset\" } ]\n");
    CHECK_FALSE(set.catalog.find("bad"));
    CHECK(set.catalog.find("good"));
}
