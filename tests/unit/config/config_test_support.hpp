#pragma once
// Helpers shared by the config tests: a temporary directory per test, files written
// into it, and the problem reported on a given line.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

#include "config/loader.hpp"
#include "temp_dir.hpp"

namespace framecl::config::test {

using framecl::test::TempDir;

// Path defaults that name no pipeline directory, so a test reads only its own text.
inline PathDefaults testDefaults()
{
    return PathDefaults{
        .socket = "/run/framecl-test/framecl.sock",
        .buffer_socket = "/run/framecl-test/buffers.sock",
        .plugin_dirs = {"/opt/framecl-test/plugins"},
        .kernel_dirs = {"/opt/framecl-test/kernels"},
        .pipeline_dirs = {},
        .cache_dir = "/var/cache/framecl-test",
    };
}

inline bool contains(std::string_view text, std::string_view part)
{
    return text.find(part) != std::string_view::npos;
}

// The problems of `text` read as the main file "cfg.toml"; fails the test if it loads.
inline ConfigErrors errorsOf(std::string_view text)
{
    auto result = parseConfig(text, "cfg.toml", testDefaults());
    REQUIRE_FALSE(result.has_value());
    return result.error();
}

// The first problem reported at `line` of cfg.toml, or empty.
inline std::string problemOnLine(const ConfigErrors& errors, int line)
{
    const std::string prefix = "cfg.toml:" + std::to_string(line) + ":";
    for (const std::string& problem : errors.problems)
        if (problem.starts_with(prefix))
            return problem;
    return {};
}

} // namespace framecl::config::test
