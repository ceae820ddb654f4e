#pragma once
// The subcommands that ask framecld about itself. Each returns the process exit code.

#include <cstdint>
#include <string>

#include "client-tools/daemon_client.hpp"

namespace framecl::cli {

// `framecl pipelines`: the pipelines the daemon offers and their stages.
int listPipelines(const DaemonOptions& daemon);

// `framecl devices`: the device the daemon uses.
int showDevice(const DaemonOptions& daemon);

// `framecl stats`: the daemon's statistics as tables, or (json_raw) as sent.
int showStats(const DaemonOptions& daemon, bool json_raw);

// `framecl trace`: the daemon's GPU work of the next `seconds` as Chrome trace JSON,
// written to `output` ("-": stdout) whole or not at all.
int recordTrace(const DaemonOptions& daemon, uint32_t seconds, const std::string& output);

} // namespace framecl::cli
