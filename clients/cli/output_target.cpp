#include "output_target.hpp"

#include <fmt/format.h>

namespace framecl::cli {

bool outputIsDirectory(const std::filesystem::path& output, size_t input_count)
{
    const auto extension = output.extension();
    return input_count > 1 || (extension != ".png" && extension != ".raw");
}

Result<void> prepareOutput(const std::filesystem::path& output, size_t input_count)
{
    if (!outputIsDirectory(output, input_count))
        return {};
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    if (ec)
        return fail(fmt::format("{}: {}", output.string(), ec.message()));
    return {};
}

} // namespace framecl::cli
