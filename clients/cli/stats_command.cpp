#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "daemon_commands.hpp"
#include "stats_table.hpp"

namespace framecl::cli {

int showStats(const DaemonOptions& daemon, bool json_raw)
{
    auto client = connectToDaemon(daemon);
    if (!client) {
        fmt::print(stderr, "framecl: {}\n", client.error().message);
        return 1;
    }
    char* text = nullptr;
    if (framecl_stats(client->get(), &text) != 0) {
        fmt::print(stderr, "framecl: stats: {}\n", framecl_last_error(client->get()));
        return 1;
    }
    const std::unique_ptr<char, void (*)(void*)> json(text, std::free);
    if (json_raw) {
        fmt::print("{}\n", json.get());
        return 0;
    }
    const auto parsed = nlohmann::json::parse(json.get(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
        fmt::print(stderr, "framecl: stats: framecld sent JSON that does not parse:\n{}\n", json.get());
        return 1;
    }
    fmt::print("{}", statsTable(parsed));
    return 0;
}

} // namespace framecl::cli
