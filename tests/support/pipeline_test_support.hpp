#pragma once
// Pipelines for tests: a config whose plugins are the build's own and the tests'
// (tests/plugins), with [[pipeline]] tables given as TOML, resolved on a device.

#include <string>

#include <doctest/doctest.h>

#include "config/loader.hpp"
#include "pipeline/catalog.hpp"
#include "test_env.hpp"

namespace framecl::test {

inline config::Config pipelineConfig(const std::string& pipelines_toml)
{
    const std::string text = "[daemon]\n"
                             "plugin_dirs = [\"" + requireEnv("FRAMECL_PLUGIN_DIR") + "\", \"" +
                             requireEnv("FRAMECL_TEST_PLUGIN_DIR") + "\"]\n"
                             "kernel_dirs = [\"" + (requireSourceRoot() / "kernels").string() + "\", \"" +
                             (requireSourceRoot() / "tests" / "plugins").string() + "\"]\n"
                             "pipeline_dirs = []\n" + pipelines_toml;
    auto config = config::parseConfig(text, "test.toml", config::PathDefaults{"/tmp/framecl-test.sock",
                                                                               "/tmp/framecl-test-buffers.sock",
                                                                               {}, {}, {}, "/tmp"});
    REQUIRE_MESSAGE(config, (config ? "" : config.error().joined()));
    return *config;
}

// Plugins loaded, the kernels of those the pipelines use built on `gpu`, the catalog
// resolved; a pipeline left out fails the test. (The test plugin directory always gives
// problems of its own: wrong_abi and no_entry are refused — on purpose.)
inline pipeline::PipelineSet pipelineSet(const config::Config& config, const gpu::GpuContext& gpu,
                                         gpu::ProgramCache& cache)
{
    auto set = pipeline::loadPipelineSet(config, &gpu, &cache);
    for (const auto& problem : set.catalog.problems)
        FAIL_CHECK(problem);
    return set;
}

} // namespace framecl::test
