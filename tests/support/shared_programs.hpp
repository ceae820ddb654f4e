#pragma once
// The programs one test process compiles once, so that its daemons and test devices
// start as a daemon restarting on its cache_dir does: building from source costs a
// sanitized daemon seconds on PoCL (docs/testing.md, "Programs compiled once per test
// process").

#include <filesystem>
#include <system_error>

#include "temp_dir.hpp"

namespace framecl::test {

// A directory of this process, removed at its exit, for the program cache's entries
// (`*.bin`, gpu/program_cache.hpp): a ProgramCache may use it as its own, since
// several may share one directory.
inline const std::filesystem::path& sharedProgramsDir()
{
    static const TempDir dir;
    return dir.path();
}

// Copies the program cache entries of `from` that `to` lacks into `to`, creating it.
// Best effort: an entry that cannot be copied is built from source where it is missing.
inline void copyProgramEntries(const std::filesystem::path& from, const std::filesystem::path& to)
{
    std::error_code ec;
    std::filesystem::create_directories(to, ec);
    for (const auto& entry : std::filesystem::directory_iterator(from, ec))
        if (entry.path().extension() == ".bin")
            std::filesystem::copy_file(entry.path(), to / entry.path().filename(),
                                       std::filesystem::copy_options::skip_existing, ec);
}

} // namespace framecl::test
