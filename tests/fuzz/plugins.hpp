#pragma once
// The plugins the fuzz harnesses feed: every one this build made, loaded once.

#include <memory>

#include "framecl_build_config.h"
#include "pipeline/plugin_registry.hpp"

namespace framecl::fuzz {

inline const std::shared_ptr<const pipeline::PluginRegistry>& builtPlugins()
{
    static const auto registry = pipeline::PluginRegistry::load({FRAMECL_BUILD_ROOT "/plugins"});
    return registry;
}

} // namespace framecl::fuzz
