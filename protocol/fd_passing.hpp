#pragma once
// Packets with file descriptors on a Unix SOCK_SEQPACKET socket (unix(7), SCM_RIGHTS).
// A packet arrives whole or not at all, so one packet carries one message and its fds.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace framecl::protocol {

// Most fds one packet may carry: the kernel's SCM_MAX_FD is 253.
inline constexpr size_t max_fds_per_packet = 64;
// Largest packet framecl sends on the buffer socket.
inline constexpr size_t max_packet_bytes = 64 * 1024;

Result<void> sendPacket(int socket, std::span<const uint8_t> bytes, std::span<const int> fds = {});
// The same, once, with `flags` added to sendmsg's (MSG_DONTWAIT: a caller that must not
// wait): 0, or the negative errno (-E2BIG for too many fds), retried only on EINTR.
int sendPacketOnce(int socket, std::span<const uint8_t> bytes, std::span<const int> fds, int flags);

struct Packet {
    std::vector<uint8_t> bytes; // empty with `closed`
    std::vector<UniqueFd> fds;  // owned: closed unless the receiver keeps them
    bool closed = false;        // the peer closed the connection
    bool none = false;          // nothing to read yet (EAGAIN on a non-blocking socket)
    // Why not every fd sent with the packet arrived (more than max_fds_per_packet, or
    // none left under RLIMIT_NOFILE); the message itself is whole, and `fds` is empty.
    std::string fds_lost;
};

// Receives one packet. Fds arrive close-on-exec. A message longer than max_packet_bytes
// is an error, and every fd that did arrive is closed; a packet whose fds did not all
// arrive is returned with `fds_lost`, so that the receiver refuses that message alone.
Result<Packet> receivePacket(int socket);

} // namespace framecl::protocol
