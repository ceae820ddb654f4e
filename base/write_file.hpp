#pragma once

#include <filesystem>
#include <string_view>

#include "result.hpp"

namespace framecl {

// Replaces `path` with `bytes`: written to a temporary file beside it, synced, renamed
// over it and the directory synced, so that a reader (another daemon, or this one after
// a crash or power loss) sees the old content or the new, never half of one. The error
// names the file and the reason.
Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

} // namespace framecl
