#pragma once
// The moment a wait must end by. Every wait in libframecl has one (client.h: the
// library never hangs), so a dead or wedged daemon costs a caller at most its timeout.

#include <algorithm>
#include <chrono>
#include <climits>

namespace framecl::clientlib {

using Clock = std::chrono::steady_clock;

class Deadline {
  public:
    static Deadline after(std::chrono::milliseconds timeout)
    {
        return Deadline(Clock::now() + timeout);
    }
    static Deadline at(Clock::time_point when) { return Deadline(when); }
    static Deadline never() { return Deadline(Clock::time_point::max()); }

    bool expired() const { return Clock::now() >= when_; }
    std::chrono::milliseconds left() const
    {
        return std::chrono::ceil<std::chrono::milliseconds>(
            std::max(when_ - Clock::now(), Clock::duration::zero()));
    }

    // The timeout for poll(2): -1 for never, else the milliseconds left rounded up, so
    // that a wait never ends before the deadline.
    int pollTimeout() const
    {
        if (when_ == Clock::time_point::max()) return -1;
        return int(std::min<std::chrono::milliseconds::rep>(left().count(), INT_MAX));
    }

  private:
    explicit Deadline(Clock::time_point when) : when_(when) {}

    Clock::time_point when_;
};

} // namespace framecl::clientlib
