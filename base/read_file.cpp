#include "read_file.hpp"

#include <cerrno>
#include <cstdio>
#include <memory>

namespace framecl {

tl::expected<std::string, std::error_code> readFile(const std::filesystem::path& path)
{
    const auto failure = [] { return tl::unexpected(std::error_code(errno, std::generic_category())); };
    std::unique_ptr<std::FILE, decltype(&std::fclose)> stream(std::fopen(path.c_str(), "rbe"), &std::fclose);
    if (!stream)
        return failure();
    std::string text;
    char chunk[4096];
    std::size_t count = 0;
    while ((count = std::fread(chunk, 1, sizeof chunk, stream.get())) > 0)
        text.append(chunk, count);
    if (std::ferror(stream.get()))
        return failure();
    return text;
}

} // namespace framecl
