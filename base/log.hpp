#pragma once
// Loggers by component (`config`, `gpu`, `pipeline`, `daemon`, ...), all writing to
// one shared sink: journald when systemd connected our stderr to the journal,
// stderr otherwise.

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace framecl::log {

enum class Sink { Auto, Stderr, Journal };

// Chooses the sink and level for every logger, existing and future. `Auto` picks the
// journal when $JOURNAL_STREAM names the device and inode of our stderr, which is how
// systemd says that stderr already goes to the journal (systemd.exec(5)).
void setup(Sink sink, spdlog::level::level_enum level);

// The logger for one component, created on first use with the shared sink.
std::shared_ptr<spdlog::logger> get(const std::string& component);

} // namespace framecl::log
