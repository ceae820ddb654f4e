#pragma once
// Loading framecld's configuration: one main TOML file plus the `*.toml` files of its
// pipeline directories, validated into a Config. Every key docs/configuration.md
// lists is checked here, with the types and ranges it gives,
// even where the feature that uses it lands later.

#include <filesystem>
#include <string_view>

#include <tl/expected.hpp>

#include "config/config.hpp"

namespace framecl::config {

// Reads `file`, then the `*.toml` files of each of its pipeline_dirs in turn, each
// directory's files in name order. Relative paths in a file resolve against that file's
// directory. Path keys that the file leaves out take `defaults`. A pipeline directory
// that does not exist is skipped; one that cannot be read is an error.
//
// On failure, every problem found, each one line "file:line:column: key: what is wrong"
// ("file: what is wrong" for a file or directory that cannot be read).
tl::expected<Config, ConfigErrors> loadConfigFile(const std::filesystem::path& file,
                                                  const PathDefaults& defaults);

// The same with the main file's text given: `file` names it in errors and anchors its
// relative paths; it is not read. The pipeline directories are read as above.
tl::expected<Config, ConfigErrors> parseConfig(std::string_view text,
                                               const std::filesystem::path& file,
                                               const PathDefaults& defaults);

} // namespace framecl::config
