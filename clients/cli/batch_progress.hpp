#pragma once
// What `framecl process` says while it works through its inputs, in or out of process:
// "input -> output" per input (unless a progress bar on a terminal says it better),
// each failure's reason, and at the end how many failed.

#include <cstddef>
#include <filesystem>

#include "base/result.hpp"

namespace framecl::cli {

class BatchProgress {
public:
    explicit BatchProgress(size_t total) : total_(total) {}

    // One input is through: written to the path, or failed for the reason given.
    void finished(const std::filesystem::path& input, const Result<std::filesystem::path>& result);

    // The process exit code: 1 if any input failed, after saying how many.
    int exitCode() const;

private:
    size_t total_;
    size_t done_ = 0;
    size_t failed_ = 0;
};

} // namespace framecl::cli
