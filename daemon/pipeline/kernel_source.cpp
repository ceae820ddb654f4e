#include "pipeline/kernel_source.hpp"

#include <fmt/format.h>

#include "base/read_file.hpp"

namespace framecl::pipeline {
namespace fs = std::filesystem;

namespace {

Result<std::string> readFromDirs(const std::vector<fs::path>& kernel_dirs, const std::string& file)
{
    std::string searched;
    for (const auto& dir : kernel_dirs) {
        if (auto text = readFile(dir / file))
            return std::move(*text);
        searched += fmt::format("{}{}", searched.empty() ? "" : ", ", dir.string());
    }
    return fail(fmt::format("kernel file '{}' not found in daemon.kernel_dirs ({})", file, searched));
}

// `file` as the string literal of a #line directive: quotes, backslashes and control
// characters escaped.
std::string lineFileName(const std::string& file)
{
    std::string literal;
    for (const char c : file) {
        if (c == '"' || c == '\\')
            literal += {'\\', c};
        else if (static_cast<unsigned char>(c) < 0x20)
            literal += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else
            literal += c;
    }
    return literal;
}

} // namespace

Result<std::string> readKernelFile(const std::vector<fs::path>& kernel_dirs, const std::string& file)
{
    auto source = readFromDirs(kernel_dirs, file);
    if (!source)
        return source;
    return fmt::format("#line 1 \"{}\"\n{}\n", lineFileName(file), *source);
}

Result<std::string> readKernelSource(const std::vector<fs::path>& kernel_dirs, const std::string& file)
{
    auto prelude = readKernelFile(kernel_dirs, kernel_prelude_file);
    if (!prelude)
        return prelude;
    auto source = readKernelFile(kernel_dirs, file);
    if (!source)
        return source;
    return *prelude + *source;
}

} // namespace framecl::pipeline
