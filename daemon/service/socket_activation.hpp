#pragma once
// Sockets handed over by a service manager (sd_listen_fds(3)). With framecld.socket,
// systemd listens on the control and buffer sockets before framecld runs and passes
// them on when it starts it, so a client that connects first is served once the
// daemon is up, and the sockets outlive a restart. Without LISTEN_FDS framecld
// creates both itself.

#include <filesystem>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::service {

struct ActivatedSockets {
    UniqueFd control; // a SOCK_STREAM socket listening on daemon.socket; invalid if none came
    UniqueFd buffers; // a SOCK_SEQPACKET socket listening on daemon.buffer_socket
};

// Takes the sockets passed in $LISTEN_FDS (for this process) and unsets the variables,
// so that no child inherits them. Each must be a Unix socket listening on one of the
// two paths, with that socket's type; any other fd is an error that names it and says
// what it is. Call before any thread starts (it changes the environment).
Result<ActivatedSockets> takeActivatedSockets(const std::filesystem::path& control_path,
                                              const std::filesystem::path& buffer_path);

} // namespace framecl::service
