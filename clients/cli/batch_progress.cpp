#include "batch_progress.hpp"

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

namespace framecl::cli {
namespace {

// One line redrawn in place on a terminal; nothing when stderr is a file or pipe.
void drawProgress(size_t done, size_t total)
{
    if (total < 2 || !isatty(STDERR_FILENO))
        return;
    constexpr size_t width = 30;
    const size_t filled = done * width / total;
    fmt::print(stderr, "\r[{}{}] {}/{}", std::string(filled, '#'), std::string(width - filled, ' '), done, total);
    if (done == total)
        fmt::print(stderr, "\n");
}

} // namespace

void BatchProgress::finished(const std::filesystem::path& input, const Result<std::filesystem::path>& result)
{
    ++done_;
    if (!result) {
        ++failed_;
        fmt::print(stderr, "{}framecl: {}\n", isatty(STDERR_FILENO) ? "\r" : "", result.error().message);
    } else if (total_ == 1 || !isatty(STDERR_FILENO)) {
        fmt::print("{} -> {}\n", input.string(), result->string());
    }
    drawProgress(done_, total_);
}

int BatchProgress::exitCode() const
{
    if (failed_)
        fmt::print(stderr, "framecl: {} of {} inputs failed\n", failed_, total_);
    return failed_ ? 1 : 0;
}

} // namespace framecl::cli
