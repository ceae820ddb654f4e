#include "ipc/peer_access.hpp"

#include <algorithm>
#include <charconv>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <fmt/format.h>

namespace framecl::ipc {
namespace {

template <typename Id> bool parseId(const std::string& text, Id& id)
{
    unsigned long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return false;
    id = Id(value);
    return true;
}

// The groups of the user `uid`, supplementary ones included.
std::vector<gid_t> groupsOf(uid_t uid, gid_t primary)
{
    const passwd* user = getpwuid(uid);
    if (!user)
        return {primary};
    int count = 32;
    std::vector<gid_t> groups(static_cast<size_t>(count));
    if (getgrouplist(user->pw_name, primary, groups.data(), &count) < 0) {
        groups.resize(size_t(count));
        getgrouplist(user->pw_name, primary, groups.data(), &count);
    }
    groups.resize(size_t(count));
    return groups;
}

} // namespace

Result<PeerAccess> PeerAccess::fromConfig(const config::DaemonConfig& daemon)
{
    PeerAccess access;
    for (const auto& name : daemon.allowed_users) {
        uid_t uid = 0;
        if (!parseId(name, uid)) {
            const passwd* user = getpwnam(name.c_str());
            if (!user)
                return fail(fmt::format("daemon.allowed_users: no user named '{}'", name));
            uid = user->pw_uid;
        }
        access.users_.push_back(uid);
    }
    for (const auto& name : daemon.allowed_groups) {
        gid_t gid = 0;
        if (!parseId(name, gid)) {
            const struct group* group = getgrnam(name.c_str());
            if (!group)
                return fail(fmt::format("daemon.allowed_groups: no group named '{}'", name));
            gid = group->gr_gid;
        }
        access.groups_.push_back(gid);
    }
    return access;
}

Result<void> PeerAccess::check(const ucred& peer) const
{
    if (users_.empty() && groups_.empty())
        return {};
    if (peer.uid == 0 || peer.uid == geteuid())
        return {};
    if (std::find(users_.begin(), users_.end(), peer.uid) != users_.end())
        return {};
    for (gid_t gid : groupsOf(peer.uid, peer.gid))
        if (std::find(groups_.begin(), groups_.end(), gid) != groups_.end())
            return {};
    return fail(fmt::format("pid {} (uid {}, gid {}) is not in daemon.allowed_users or daemon.allowed_groups",
                            peer.pid, peer.uid, peer.gid));
}

} // namespace framecl::ipc
