#pragma once
// What the plugin tests share: where `meson test` put the built plugins, and a few
// builders of config values and plugins.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "config/config.hpp"
#include "pipeline/plugin_registry.hpp"
#include "test_env.hpp"

namespace framecl::test {

// <build>/plugins: the plugins of plugins/ (color).
inline std::filesystem::path pluginDir()
{
    return requireEnv("FRAMECL_PLUGIN_DIR");
}

// <build>/tests/plugins: offset, wrong_abi, no_entry, broken_kernel.
inline std::filesystem::path testPluginDir()
{
    return requireEnv("FRAMECL_TEST_PLUGIN_DIR");
}

// The shipped kernels, and tests/plugins for the test plugins' own kernel files.
inline std::vector<std::filesystem::path> testKernelDirs()
{
    return {requireSourceRoot() / "kernels", requireSourceRoot() / "tests" / "plugins"};
}

// The first of `problems` that contains `text`, or empty.
inline std::string problemWith(const std::vector<std::string>& problems, const std::string& text)
{
    const auto found =
        std::find_if(problems.begin(), problems.end(), [&](const std::string& problem) {
            return problem.find(text) != std::string::npos;
        });
    return found == problems.end() ? std::string() : *found;
}

// A stage parameter as the config reader gives it, written on `line` of a pipeline file.
inline config::StageParameter stageParameter(std::string key, config::ParameterValue value,
                                             uint32_t line = 1)
{
    return {std::move(key), std::move(value), {"pipelines.d/p.toml", line, 5}};
}

// The Plugin of a descriptor the test wrote, which must pass the descriptor checks.
inline pipeline::Plugin pluginOf(const framecl_plugin& descriptor)
{
    auto plugin = pipeline::Plugin::fromDescriptor(&descriptor, "in-test");
    REQUIRE_MESSAGE(plugin, (plugin ? "" : plugin.error().message));
    return std::move(*plugin);
}

} // namespace framecl::test
