#pragma once
// CLOCK_MONOTONIC in nanoseconds: the one clock of a frame's times (Submit, enqueue,
// completion, Done), its deadline and the scheduler's predictions. steady_clock is
// CLOCK_MONOTONIC on Linux, so its time points convert without a second reading.

#include <chrono>
#include <cstdint>
#include <ctime>

namespace framecl {

inline uint64_t monotonicNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
}

inline uint64_t monotonicNs(std::chrono::steady_clock::time_point at)
{
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
}

} // namespace framecl
