#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/unique_fd.hpp"
#include "daemon_commands.hpp"

namespace framecl::cli {
namespace {

// The file a trace is written to, created before the daemon is asked (a window can last
// a minute: a bad path should not cost it) and renamed over the target only once the
// whole trace is in it, so that a reader never sees half a trace.
class TraceFile {
public:
    static Result<TraceFile> create(const std::filesystem::path& target)
    {
        std::error_code ec;
        if (std::filesystem::is_directory(target, ec))
            return fail(fmt::format("cannot write {}: it is a directory; name a file", target.string()));
        std::filesystem::path temporary = target;
        temporary += fmt::format(".{}.tmp", getpid());
        UniqueFd fd(open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
        if (!fd.valid())
            return fail(fmt::format("cannot write {}: {}", target.string(), std::strerror(errno)));
        return TraceFile(target, std::move(temporary), std::move(fd));
    }

    TraceFile(TraceFile&& other) noexcept
        : target_(std::move(other.target_)), temporary_(std::exchange(other.temporary_, {})),
          fd_(std::move(other.fd_)), committed_(other.committed_)
    {
    }
    TraceFile& operator=(TraceFile&&) = delete;
    ~TraceFile()
    {
        if (!committed_ && !temporary_.empty())
            unlink(temporary_.c_str());
    }

    Result<void> commit(std::string_view text)
    {
        if (auto written = writeAll(fd_.get(), text, temporary_.string()); !written)
            return written;
        if (close(fd_.release()) != 0)
            return fail(fmt::format("cannot write {}: {}", temporary_.string(), std::strerror(errno)));
        if (rename(temporary_.c_str(), target_.c_str()) != 0)
            return fail(fmt::format("cannot rename {} to {}: {}", temporary_.string(), target_.string(),
                                    std::strerror(errno)));
        committed_ = true;
        return {};
    }

    static Result<void> writeAll(int fd, std::string_view text, const std::string& name)
    {
        while (!text.empty()) {
            const ssize_t written = write(fd, text.data(), text.size());
            if (written < 0 && errno == EINTR)
                continue;
            if (written < 0)
                return fail(fmt::format("cannot write {}: {}", name, std::strerror(errno)));
            text.remove_prefix(size_t(written));
        }
        return {};
    }

private:
    TraceFile(std::filesystem::path target, std::filesystem::path temporary, UniqueFd fd)
        : target_(std::move(target)), temporary_(std::move(temporary)), fd_(std::move(fd))
    {
    }

    std::filesystem::path target_;
    std::filesystem::path temporary_;
    UniqueFd fd_;
    bool committed_ = false;
};

// The trace's events: Chrome's JSON object format keeps them in "traceEvents"; its
// array format is the array itself.
Result<size_t> countEvents(const char* text)
{
    const auto trace = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (trace.is_discarded())
        return fail("framecld sent a trace that does not parse as JSON");
    if (trace.is_array())
        return trace.size();
    const auto events = trace.is_object() ? trace.find("traceEvents") : trace.end();
    if (!trace.is_object() || events == trace.end() || !events->is_array())
        return fail("framecld sent a trace without a traceEvents array");
    return events->size();
}

} // namespace

int recordTrace(const DaemonOptions& daemon, uint32_t seconds, const std::string& output)
{
    const bool to_stdout = output == "-";
    std::optional<TraceFile> file;
    if (!to_stdout) {
        auto created = TraceFile::create(output);
        if (!created) {
            fmt::print(stderr, "framecl: trace: {}\n", created.error().message);
            return 1;
        }
        file.emplace(std::move(*created));
    }

    auto client = connectToDaemon(daemon);
    if (!client) {
        fmt::print(stderr, "framecl: {}\n", client.error().message);
        return 1;
    }
    fmt::print(stderr, "tracing framecld for {} s...\n", seconds);
    char* text = nullptr;
    if (framecl_trace(client->get(), seconds, &text) != 0) {
        fmt::print(stderr, "framecl: trace: {}\n", framecl_last_error(client->get()));
        return 1;
    }
    const std::unique_ptr<char, void (*)(void*)> json(text, std::free);
    const auto events = countEvents(json.get());
    if (!events) {
        fmt::print(stderr, "framecl: trace: {}\n", events.error().message);
        return 1;
    }

    const std::string_view trace(json.get());
    if (to_stdout) {
        if (auto written = TraceFile::writeAll(STDOUT_FILENO, trace, "stdout"); !written) {
            fmt::print(stderr, "framecl: trace: {}\n", written.error().message);
            return 1;
        }
        // The summary goes to stderr: stdout holds the trace alone.
        fmt::print(stderr, "wrote {} events to stdout\n", *events);
        return 0;
    }
    if (auto committed = file->commit(trace); !committed) {
        fmt::print(stderr, "framecl: trace: {}\n", committed.error().message);
        return 1;
    }
    fmt::print("wrote {} events to {} (open in https://ui.perfetto.dev)\n", *events, output);
    return 0;
}

} // namespace framecl::cli
