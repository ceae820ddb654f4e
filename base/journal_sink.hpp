#pragma once
// An spdlog sink that writes to the systemd journal (sd_journal_sendv(3)) with fields
// beside the message: the component (the logger's name) and, where the thread has set
// them (log::ScopedFields), the client, session and pipeline the entry is about, so
// that `journalctl FRAMECL_CLIENT=camera0` shows one client's story.

#include <mutex>

#include <spdlog/sinks/base_sink.h>

namespace framecl::log {

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
protected:
    void sink_it_(const spdlog::details::log_msg& message) override;
    void flush_() override {}
};

} // namespace framecl::log
