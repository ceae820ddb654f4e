#pragma once
// The subcommands that ask framecld about itself. Each returns the process exit code.

#include "daemon_client.hpp"

namespace framecl::cli {

// `framecl pipelines`: the pipelines the daemon offers and their stages.
int listPipelines(const DaemonOptions& daemon);

// `framecl devices`: the device the daemon uses.
int showDevice(const DaemonOptions& daemon);

// `framecl stats`: the daemon's statistics, pretty-printed or (json_raw) as sent.
int showStats(const DaemonOptions& daemon, bool json_raw);

} // namespace framecl::cli
