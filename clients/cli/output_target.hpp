#pragma once
// Where `framecl process --out` writes: a .png or .raw file for a single input;
// anything else is a directory that gets one file per input, named by its stem.

#include <cstddef>
#include <filesystem>

#include "base/result.hpp"

namespace framecl::cli {

bool outputIsDirectory(const std::filesystem::path& output, size_t input_count);

// Creates the output directory when --out names one; the error names the path.
Result<void> prepareOutput(const std::filesystem::path& output, size_t input_count);

} // namespace framecl::cli
