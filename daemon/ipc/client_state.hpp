#pragma once
// What framecld holds for one connected client.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <sys/socket.h>

#include "base/unique_fd.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/session.hpp"

namespace framecl::ipc {

struct SessionCounters {
    uint64_t done = 0;
    uint64_t failed = 0;
    uint64_t busy = 0;
};

struct SessionState {
    // Shared with frames in flight, so a session closed mid-frame lives until they end.
    std::shared_ptr<pipeline::Session> session;
    std::string recording; // how frames are replayed: "off" until recordings land
    SessionCounters counters;
    uint32_t in_flight = 0;
};

struct ClientState {
    std::string token;
    std::string identity; // the ZeroMQ routing id of its DEALER socket
    std::string name;
    std::optional<ucred> peer;  // once the buffer socket is bound
    UniqueFd buffer_connection; // its lifetime is the client's
    std::map<uint32_t, std::shared_ptr<memory::ImportedBuffer>> buffers;
    uint64_t buffer_bytes = 0;
    std::map<uint32_t, SessionState> sessions;
    uint32_t next_session = 1;
    uint32_t in_flight = 0;
    std::chrono::steady_clock::time_point last_seen;
};

} // namespace framecl::ipc
