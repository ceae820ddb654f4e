#pragma once
// Paths `meson test` hands the tests through the environment (tests/meson.build).

#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

namespace framecl::test {

inline std::string requireEnv(const char* name)
{
    const char* value = std::getenv(name);
    REQUIRE_MESSAGE(value, name << " is not set; run the tests through `meson test`");
    return value;
}

} // namespace framecl::test
