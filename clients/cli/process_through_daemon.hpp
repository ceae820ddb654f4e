#pragma once

#include <string>

#include "client-tools/daemon_client.hpp"
#include "process_in_process.hpp"

namespace framecl::cli {

// Inputs that are raw planes rather than image files: both empty for image files.
struct RawInputFormat {
    std::string format; // a format's name (framecl_format_from_name), e.g. "nv12"
    std::string size;   // "WxH"
};

// Runs a pipeline on files through framecld: each input is copied into a sealed memfd,
// processed by the daemon into another, and written as PNG (R8, ABGR8888) or raw planes
// (other formats). request.config_file is not used: the daemon has its own. Returns the
// process exit code: 1 if anything failed, after the other inputs were processed.
int processThroughDaemon(const ProcessRequest& request, const RawInputFormat& raw, const DaemonOptions& daemon);

} // namespace framecl::cli
