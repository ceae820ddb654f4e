#pragma once
// Paths `meson test` hands the tests through the environment (tests/meson.build).

#include <cstdlib>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

namespace framecl::test {

inline std::string requireEnv(const char* name)
{
    const char* value = std::getenv(name);
    REQUIRE_MESSAGE(value, name << " is not set; run the tests through `meson test`");
    return value;
}

// The source tree, for kernels and sample data.
inline std::filesystem::path requireSourceRoot()
{
    return requireEnv("FRAMECL_SOURCE_ROOT");
}

} // namespace framecl::test
