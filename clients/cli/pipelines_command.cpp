#include <fmt/format.h>

#include "daemon_commands.hpp"

namespace framecl::cli {

int listPipelines(const DaemonOptions& daemon)
{
    auto client = connectToDaemon(daemon);
    if (!client) {
        fmt::print(stderr, "framecl: {}\n", client.error().message);
        return 1;
    }
    // As Welcome listed them: `copy` first, then the configured ones whose plugins
    // loaded, with how a session of each would replay its frames on this device, which
    // of its stages run as one kernel and what the tuner chose for its stages there so far.
    const framecl_client* c = client->get();
    for (size_t i = 0; i < framecl_pipeline_count(c); ++i) {
        fmt::print("{}  (recording: {})\n", framecl_pipeline_name(c, i), framecl_pipeline_recording(c, i));
        for (size_t s = 0; s < framecl_pipeline_stage_count(c, i); ++s)
            fmt::print("  {}. {}\n", s + 1, framecl_pipeline_stage(c, i, s));
        for (size_t f = 0; f < framecl_pipeline_fusion_count(c, i); ++f)
            fmt::print("  fusion: {}\n", framecl_pipeline_fusion(c, i, f));
        for (size_t t = 0; t < framecl_pipeline_tuned_count(c, i); ++t)
            fmt::print("  tuned: {}\n", framecl_pipeline_tuned(c, i, t));
    }
    return 0;
}

} // namespace framecl::cli
