#pragma once
// The daemon's RLIMIT_NOFILE. Every buffer a client registers is an fd framecld keeps
// open, so the limits allow max_clients x max_buffers_per_client of them (1024 with
// the defaults) beside the sockets, the GPU driver's own and each client's two
// connections: more than the soft limit of 1024 that systemd and most shells give.
// The hard limit is usually far higher (systemd: 524288), and raising the soft one up
// to it needs no privilege.

#include <cstdint>

#include "base/result.hpp"

namespace framecl::service {

// Raises the soft RLIMIT_NOFILE to `wanted`, or to the hard limit where that is lower;
// never lowers it. Returns the soft limit now in force.
Result<uint64_t> raiseOpenFileLimit(uint64_t wanted);

} // namespace framecl::service
