#pragma once
// Expected failures are values (docs/architecture.md, "Errors, logs and ownership"): a Result holds either
// the value or an Error whose message a user can act on. Exceptions never cross a
// thread, a plugin or the C API.

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace framecl {

struct Error {
    std::string message;
};

template <typename T> using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(std::string message)
{
    return tl::unexpected<Error>(Error{std::move(message)});
}

} // namespace framecl
