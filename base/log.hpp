#pragma once
// Loggers by component (`config`, `gpu`, `pipeline`, `daemon`, ...), all writing to
// one shared sink: journald when systemd connected our stderr to the journal,
// stderr otherwise.

#include <cstdint>
#include <memory>
#include <optional>
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

// What a log entry is about, beyond its component. The journal gets these as fields
// (FRAMECL_CLIENT, FRAMECL_SESSION, FRAMECL_PIPELINE); on stderr only the message's own
// text names them.
struct Fields {
    std::string client;
    std::optional<uint32_t> session;
    std::string pipeline;
};

// Sets this thread's fields while it works for one client (or one of its sessions),
// and puts back the ones before when it goes.
class ScopedFields {
public:
    explicit ScopedFields(Fields fields);
    ~ScopedFields();
    ScopedFields(const ScopedFields&) = delete;
    ScopedFields& operator=(const ScopedFields&) = delete;

private:
    Fields previous_;
};

// This thread's fields: empty outside any ScopedFields.
const Fields& currentFields();

} // namespace framecl::log
