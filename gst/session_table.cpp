#include "session_table.hpp"

namespace framecl::gst {

SessionTable::SessionTable(std::shared_ptr<DaemonLink> link, std::string pipeline)
    : link_(std::move(link)), pipeline_(std::move(pipeline))
{
}

SessionTable::~SessionTable()
{
    for (const auto& [key, session] : sessions_)
        if (session)
            link_->closeSession(session->id);
}

Result<OpenedSession> SessionTable::lookUp(const Key& key, bool* asked)
{
    auto it = sessions_.find(key);
    if (asked)
        *asked = it == sessions_.end();
    if (it == sessions_.end()) {
        const auto& [fourcc, width, height] = key;
        it = sessions_.emplace(key, link_->openSession(pipeline_, fourcc, width, height)).first;
    }
    return it->second;
}

Result<OpenedSession> SessionTable::sessionFor(uint32_t fourcc, uint32_t width, uint32_t height, bool* asked)
{
    std::lock_guard lock(mutex_);
    return lookUp({fourcc, width, height}, asked);
}

Result<OpenedSession> SessionTable::keepOnly(uint32_t fourcc, uint32_t width, uint32_t height)
{
    std::lock_guard lock(mutex_);
    const Key kept{fourcc, width, height};
    auto session = lookUp(kept, nullptr);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (it->first != kept && it->second)
            link_->closeSession(it->second->id);
        it = it->first == kept ? std::next(it) : sessions_.erase(it);
    }
    return session;
}

} // namespace framecl::gst
