#pragma once
// Who may register buffers: the buffer socket's peer credentials (SO_PEERCRED)
// checked against daemon.allowed_users and daemon.allowed_groups.

#include <string>
#include <vector>

#include <sys/socket.h>
#include <sys/types.h>

#include "base/result.hpp"
#include "config/config.hpp"

namespace framecl::ipc {

class PeerAccess {
public:
    // Resolves the names of the lists (numbers stand for themselves); an unknown name
    // is an error naming it.
    static Result<PeerAccess> fromConfig(const config::DaemonConfig& daemon);

    // Allowed: both lists empty; or root or the daemon's own user; or a uid in
    // allowed_users; or the peer's group, or one of its user's supplementary groups,
    // in allowed_groups. The error says who was refused and why.
    Result<void> check(const ucred& peer) const;

private:
    std::vector<uid_t> users_;
    std::vector<gid_t> groups_;
};

} // namespace framecl::ipc
