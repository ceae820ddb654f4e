#pragma once
// `framecl stats` for a person: framecld's StatsReply JSON (docs/protocol.md, "StatsReply
// JSON") as a daemon summary and tables of clients, sessions and pipeline stages.

#include <string>

#include <nlohmann/json.hpp>

namespace framecl::cli {

// Every field is optional here: one the daemon did not send (an older or newer
// framecld), or sent as null or of another type, shows as "-".
std::string statsTable(const nlohmann::json& stats);

} // namespace framecl::cli
