#include "config/default_paths.hpp"

#include <system_error>

#include "framecl_build_config.h"

namespace framecl::config {

namespace fs = std::filesystem;

bool runningUninstalled()
{
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return false;
    const fs::path build_root = fs::weakly_canonical(FRAMECL_BUILD_ROOT, ec);
    if (ec)
        return false;
    auto [root_end, exe_it] = std::mismatch(build_root.begin(), build_root.end(), exe.begin(), exe.end());
    return root_end == build_root.end();
}

PathDefaults defaultPaths()
{
    if (runningUninstalled()) {
        const fs::path source = FRAMECL_SOURCE_ROOT;
        const fs::path build = FRAMECL_BUILD_ROOT;
        return PathDefaults{
            .socket = build / "run" / "framecl.sock",
            .buffer_socket = build / "run" / "buffers.sock",
            .plugin_dirs = {build / "plugins"},
            .kernel_dirs = {source / "kernels"},
            .pipeline_dirs = {source / "config" / "pipelines.d"},
            .cache_dir = build / "cache",
        };
    }
    return PathDefaults{
        .socket = "/run/framecl/framecl.sock",
        .buffer_socket = "/run/framecl/buffers.sock",
        .plugin_dirs = {FRAMECL_PLUGINDIR},
        .kernel_dirs = {fs::path(FRAMECL_DATADIR) / "kernels"},
        .pipeline_dirs = {fs::path(FRAMECL_SYSCONFDIR) / "pipelines.d"},
        .cache_dir = fs::path(FRAMECL_LOCALSTATEDIR) / "cache" / "framecl",
    };
}

fs::path defaultConfigFile()
{
    if (runningUninstalled())
        return fs::path(FRAMECL_SOURCE_ROOT) / "config" / "framecld.toml";
    return fs::path(FRAMECL_SYSCONFDIR) / "framecld.toml";
}

} // namespace framecl::config
