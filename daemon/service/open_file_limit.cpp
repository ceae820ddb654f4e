#include "service/open_file_limit.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/resource.h>

#include <fmt/format.h>

namespace framecl::service {

Result<uint64_t> raiseOpenFileLimit(uint64_t wanted)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return fail(fmt::format("getrlimit(RLIMIT_NOFILE): {}", std::strerror(errno)));
    const rlim_t raised = limit.rlim_max == RLIM_INFINITY ? rlim_t(wanted) : std::min<rlim_t>(wanted, limit.rlim_max);
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < raised) {
        limit.rlim_cur = raised;
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
            return fail(fmt::format("setrlimit(RLIMIT_NOFILE, {}): {}", raised, std::strerror(errno)));
    }
    return uint64_t(limit.rlim_cur);
}

} // namespace framecl::service
