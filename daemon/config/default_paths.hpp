#pragma once

#include "config/config.hpp"

namespace framecl::config {

// The defaults for the path keys of [daemon]. Installed, they are the install paths
// (`/usr/share/framecl/kernels`, `/run/framecl/framecl.sock`, ...). A binary that runs
// from the build tree uses the source tree's kernels and config/pipelines.d, the build
// tree's plugins, and keeps its sockets and cache in the build tree, so that a fresh
// clone works without `meson install` and without root.
PathDefaults defaultPaths();

// The config file read when --config is not given.
std::filesystem::path defaultConfigFile();

// True when the running executable lies inside the build tree it was built in.
bool runningUninstalled();

} // namespace framecl::config
