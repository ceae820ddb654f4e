#include <fmt/format.h>

#include "daemon_commands.hpp"

namespace framecl::cli {

int showDevice(const DaemonOptions& daemon)
{
    auto client = connectToDaemon(daemon);
    if (!client) {
        fmt::print(stderr, "framecl: {}\n", client.error().message);
        return 1;
    }
    // Welcome names only the device in use; the capabilities behind its choices
    // (recording, import paths, hints) are not on the wire.
    fmt::print("framecld uses: {}\n", framecl_device(client->get()));
    fmt::print("For every OpenCL device on this machine and its capabilities, run `framecld --list-devices` "
               "on the daemon's host.\n");
    return 0;
}

} // namespace framecl::cli
