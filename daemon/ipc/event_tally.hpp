#pragma once
// Events that anyone who reaches a socket can cause (a connection refused, one closed
// for sending nothing) are logged at most once per kind per housekeeping period, with
// a count: one warning line each would let a single local process write the journal
// full. The first of a kind in a period is logged as it happens, so a lone event is
// seen at once; the others at debug, and summed up when the period ends.

#include <cstdint>
#include <map>
#include <string>

namespace framecl::ipc {

class EventTally {
public:
    // Logs `line` at warning if it is the first event of `kind` since the last
    // summary, at debug otherwise.
    void note(const std::string& kind, const std::string& line);
    // For each kind with events past the first since the last call: "<kind>: <n> more
    // in the last <period_s> s", at warning. Then starts counting anew.
    void summarize(int64_t period_s);

private:
    std::map<std::string, uint64_t> counts_; // by kind, since the last summary
};

} // namespace framecl::ipc
