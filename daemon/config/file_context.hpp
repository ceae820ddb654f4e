#pragma once
// One TOML file being read. It names the file in error lines, anchors the file's
// relative paths, and collects every problem of the file, so that a user sees all of
// them at once rather than one per attempt.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "config/config.hpp"

namespace framecl::config {

class FileContext {
public:
    // `file` names the file in messages, as the user wrote it.
    explicit FileContext(std::filesystem::path file);

    const std::filesystem::path& file() const { return file_; }
    SourceLocation locate(const toml::source_region& region) const;

    // A path as written in this file: a relative one resolves against the file's
    // directory, so that a config works wherever it is started from.
    std::filesystem::path resolve(const std::filesystem::path& written) const;

    // Adds "file:line:column: key: what".
    void report(const toml::source_region& where, std::string_view key, std::string_view what);
    // Adds "file:line:column: syntax error: what".
    void reportSyntaxError(const toml::parse_error& error);
    // Adds "file: key: what", for a default value, which has no place in the file.
    void reportDefault(std::string_view key, std::string_view what);

    // The problems reported so far, in the order of their place in the file (which is
    // not the order in which the tables are checked); problems of defaults come first.
    std::vector<std::string> takeProblems();

private:
    struct Problem {
        toml::source_position where; // line 0 for a default
        std::string text;
    };

    std::filesystem::path file_;
    std::filesystem::path directory_; // absolute
    std::vector<Problem> problems_;
};

} // namespace framecl::config
