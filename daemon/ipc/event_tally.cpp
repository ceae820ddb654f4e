#include "ipc/event_tally.hpp"

#include "base/log.hpp"

namespace framecl::ipc {

void EventTally::note(const std::string& kind, const std::string& line)
{
    if (counts_[kind]++ == 0)
        log::get("ipc")->warn("{}", line);
    else
        log::get("ipc")->debug("{}", line);
}

void EventTally::summarize(int64_t period_s)
{
    for (const auto& [kind, count] : counts_)
        if (count > 1)
            log::get("ipc")->warn("{}: {} more in the last {} s", kind, count - 1, period_s);
    counts_.clear();
}

} // namespace framecl::ipc
