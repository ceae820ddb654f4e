#include "daemon_client.hpp"

#include <cstdio>

namespace framecl::cli {
namespace {

// A session's first open may tune and calibrate for seconds: say what it waits for.
void printStatus(void*, const char* status)
{
    std::fprintf(stderr, "framecld: %s\n", status);
}

} // namespace

Result<DaemonClient> connectToDaemon(const DaemonOptions& options)
{
    // No --socket: the library looks at $FRAMECL_SOCKET, then its default. Its error
    // texts name the socket path.
    const framecl_connect_options connect{options.socket.empty() ? nullptr : options.socket.c_str(),
                                          options.client_name.c_str(), options.timeout_ms};
    framecl_client* client = nullptr;
    if (framecl_connect(&connect, &client) != 0)
        return fail(framecl_last_error(nullptr));
    framecl_set_status_callback(client, printStatus, nullptr);
    return DaemonClient(client, framecl_disconnect);
}

} // namespace framecl::cli
