// framecld's configuration as text (docs/configuration.md): the TOML parser, every
// table and key the loader checks, and the pipelines built from it against the plugins
// of this build (their parameters resolved and checked). Whatever the text, the loader
// answers a Config or its problems, each one line; a catalog built
// from a Config lists a pipeline or a problem for each pipeline the config defines.
#include <cstdint>
#include <string_view>

#include "config/loader.hpp"
#include "fuzz_daemon.hpp"
#include "pipeline/catalog.hpp"
#include "plugins.hpp"

using namespace framecl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // Relative paths in the text resolve against a directory that does not exist.
    const auto config = config::parseConfig(text, "/nonexistent/framecld.toml", config::PathDefaults{});
    if (!config) {
        if (config.error().problems.empty())
            fuzz::fail("a config refused with no problem named");
        for (const auto& problem : config.error().problems)
            if (problem.empty() || problem.find('\n') != std::string::npos)
                fuzz::fail("a problem that is not one line: " + problem);
        return 0;
    }
    const pipeline::Catalog catalog = pipeline::buildCatalog(*config, fuzz::builtPlugins(), nullptr);
    if (catalog.pipelines.empty() || catalog.pipelines.front()->name != "copy")
        fuzz::fail("a catalog without the built-in copy first");
    if (catalog.pipelines.size() + catalog.problems.size() != 1 + config->pipelines.size())
        fuzz::fail("not one pipeline or one problem for each pipeline of the config");
    for (const auto& problem : catalog.problems)
        if (problem.empty() || problem.find('\n') != std::string::npos)
            fuzz::fail("a catalog problem that is not one line: " + problem);
    return 0;
}
