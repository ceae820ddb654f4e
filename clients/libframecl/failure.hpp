#pragma once
// How libframecl's internals report an expected failure: the errno the C API returns
// and the text framecl_last_error() gives (docs/architecture.md, "Errors, logs and ownership": failures are values).

#include <cerrno>
#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace framecl::clientlib {

struct Failure {
    int error; // a positive errno
    std::string message;
};

template <typename T> using Outcome = tl::expected<T, Failure>;

inline tl::unexpected<Failure> failure(int error, std::string message)
{
    return tl::unexpected<Failure>(Failure{error, std::move(message)});
}

// The error of a failure that means the daemon is gone (its buffer socket closed, or a
// send to it failed): the client then reports the frames in flight as lost and
// reconnects, instead of returning the error.
inline constexpr int daemon_gone = ECONNRESET;

} // namespace framecl::clientlib
