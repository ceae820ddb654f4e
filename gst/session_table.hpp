#pragma once
// The element's sessions, one per input format and size. framecld says what a
// pipeline makes of an input only by opening a session on it (framecl_open_session()
// returns the output layout), so caps negotiation opens one for each fixed input caps
// it is asked about, and set_caps keeps the one it settles on and closes the rest.
// Failures are kept too, so that the same caps query, asked again, is answered without
// asking the daemon again.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "daemon_link.hpp"

namespace framecl::gst {

class SessionTable {
public:
    SessionTable(std::shared_ptr<DaemonLink> link, std::string pipeline);
    ~SessionTable(); // closes every session still open
    SessionTable(const SessionTable&) = delete;
    SessionTable& operator=(const SessionTable&) = delete;

    // The session for frames of `fourcc`, `width` x `height`, opened on first use;
    // `*asked` (if given) says whether the daemon was asked now.
    Result<OpenedSession> sessionFor(uint32_t fourcc, uint32_t width, uint32_t height, bool* asked = nullptr);

    // sessionFor(), closing every other session: the caps are settled.
    Result<OpenedSession> keepOnly(uint32_t fourcc, uint32_t width, uint32_t height);

private:
    using Key = std::tuple<uint32_t, uint32_t, uint32_t>; // fourcc, width, height

    Result<OpenedSession> lookUp(const Key& key, bool* asked); // with mutex_ held

    std::shared_ptr<DaemonLink> link_;
    std::string pipeline_;
    std::mutex mutex_; // caps queries come from any thread
    std::map<Key, Result<OpenedSession>> sessions_;
};

} // namespace framecl::gst
