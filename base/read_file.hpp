#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include <tl/expected.hpp>

namespace framecl {

// The whole content of a file, or the reason it could not be read.
tl::expected<std::string, std::error_code> readFile(const std::filesystem::path& path);

} // namespace framecl
