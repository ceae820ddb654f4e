#include "journal_sink.hpp"

#include <string>
#include <vector>

#include <sys/uio.h>
#include <syslog.h>

#include <fmt/format.h>
#include <systemd/sd-journal.h>

#include "log.hpp"

namespace framecl::log {
namespace {

int syslogPriority(spdlog::level::level_enum level)
{
    switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return LOG_DEBUG;
    case spdlog::level::info: return LOG_INFO;
    case spdlog::level::warn: return LOG_WARNING;
    case spdlog::level::err: return LOG_ERR;
    case spdlog::level::critical: return LOG_CRIT;
    default: return LOG_INFO;
    }
}

} // namespace

void JournalSink::sink_it_(const spdlog::details::log_msg& message)
{
    // One "FIELD=value" per entry; the values are free text (client names are
    // sanitised where the daemon takes them), sent as they are.
    std::vector<std::string> fields{
        fmt::format("MESSAGE={}", std::string_view(message.payload.data(), message.payload.size())),
        fmt::format("PRIORITY={}", syslogPriority(message.level)),
        "SYSLOG_IDENTIFIER=framecld",
        fmt::format("FRAMECL_COMPONENT={}", std::string_view(message.logger_name.data(), message.logger_name.size())),
    };
    const Fields& context = currentFields();
    if (!context.client.empty())
        fields.push_back("FRAMECL_CLIENT=" + context.client);
    if (context.session)
        fields.push_back(fmt::format("FRAMECL_SESSION={}", *context.session));
    if (!context.pipeline.empty())
        fields.push_back("FRAMECL_PIPELINE=" + context.pipeline);
    std::vector<iovec> entries;
    for (std::string& field : fields)
        entries.push_back({field.data(), field.size()});
    sd_journal_sendv(entries.data(), int(entries.size()));
}

} // namespace framecl::log
