#include "config/file_context.hpp"

#include <algorithm>
#include <system_error>
#include <tuple>

#include <fmt/format.h>

namespace framecl::config {

namespace fs = std::filesystem;

FileContext::FileContext(fs::path file) : file_(std::move(file))
{
    std::error_code ec;
    const fs::path absolute = fs::absolute(file_, ec);
    directory_ = (ec ? file_ : absolute).parent_path();
}

SourceLocation FileContext::locate(const toml::source_region& region) const
{
    return SourceLocation{.file = file_, .line = region.begin.line, .column = region.begin.column};
}

fs::path FileContext::resolve(const fs::path& written) const
{
    return (directory_ / written).lexically_normal();
}

namespace {

// `text` with its control characters written as escapes: a problem is one line
// (loader.hpp), though a quoted key or toml++'s quote of the input may hold a newline
// (the config fuzzer found one in "expected 'inf', saw 'i\n'").
std::string oneLine(std::string_view text)
{
    std::string line;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n')
            line += "\\n";
        else if (c == '\t')
            line += "\\t";
        else if (byte < 0x20 || byte == 0x7f)
            line += fmt::format("\\x{:02x}", byte);
        else
            line += c;
    }
    return line;
}

} // namespace

void FileContext::report(const toml::source_region& where, std::string_view key,
                         std::string_view what)
{
    problems_.push_back(Problem{.where = where.begin,
                                .text = fmt::format("{}:{}:{}: {}: {}", file_.string(),
                                                    where.begin.line, where.begin.column, oneLine(key),
                                                    oneLine(what))});
}

void FileContext::reportSyntaxError(const toml::parse_error& error)
{
    report(error.source(), "syntax error", error.description());
}

void FileContext::reportDefault(std::string_view key, std::string_view what)
{
    problems_.push_back(
        Problem{.where = {}, .text = fmt::format("{}: {}: {}", file_.string(), oneLine(key), oneLine(what))});
}

std::vector<std::string> FileContext::takeProblems()
{
    std::stable_sort(problems_.begin(), problems_.end(), [](const Problem& a, const Problem& b) {
        return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    std::vector<std::string> texts;
    for (Problem& problem : problems_)
        texts.push_back(std::move(problem.text));
    problems_.clear();
    return texts;
}

} // namespace framecl::config
