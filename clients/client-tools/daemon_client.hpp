#pragma once
// A connection to framecld through libframecl, said Goodbye to in exactly one place.
// Shared by the framecl CLI, framecl-mock-camera and framecl-transport-bench.

#include <memory>
#include <string>

#include <framecl/client.h>

#include "base/result.hpp"

namespace framecl::cli {

struct DaemonOptions {
    std::string socket;    // empty: $FRAMECL_SOCKET, else FRAMECL_DEFAULT_SOCKET
    int timeout_ms = 5000; // for the connection and each request
    std::string client_name;
};

using DaemonClient = std::unique_ptr<framecl_client, void (*)(framecl_client*)>;

Result<DaemonClient> connectToDaemon(const DaemonOptions& options);

} // namespace framecl::cli
