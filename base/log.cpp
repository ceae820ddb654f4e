#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "journal_sink.hpp"

namespace framecl::log {
namespace {

std::mutex registry_mutex;
spdlog::sink_ptr shared_sink;
spdlog::level::level_enum shared_level = spdlog::level::info;
std::vector<std::shared_ptr<spdlog::logger>> loggers;
thread_local Fields thread_fields;

bool stderrIsJournal()
{
    const char* stream = std::getenv("JOURNAL_STREAM");
    if (!stream)
        return false;
    unsigned long long dev = 0, ino = 0;
    if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2)
        return false;
    struct stat st {};
    if (fstat(STDERR_FILENO, &st) != 0)
        return false;
    return st.st_dev == dev && st.st_ino == ino;
}

spdlog::sink_ptr makeSink(Sink sink)
{
    if (sink == Sink::Journal || (sink == Sink::Auto && stderrIsJournal()))
        return std::make_shared<JournalSink>();
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_pattern("%H:%M:%S.%e %^%-7l%$ %-8n %v");
    return console;
}

} // namespace

void setup(Sink sink, spdlog::level::level_enum level)
{
    std::lock_guard lock(registry_mutex);
    shared_sink = makeSink(sink);
    shared_level = level;
    for (auto& logger : loggers) {
        logger->sinks() = {shared_sink};
        logger->set_level(level);
    }
}

std::shared_ptr<spdlog::logger> get(const std::string& component)
{
    std::lock_guard lock(registry_mutex);
    for (auto& logger : loggers)
        if (logger->name() == component)
            return logger;
    if (!shared_sink)
        shared_sink = makeSink(Sink::Stderr);
    auto logger = std::make_shared<spdlog::logger>(component, shared_sink);
    logger->set_level(shared_level);
    loggers.push_back(logger);
    return logger;
}

ScopedFields::ScopedFields(Fields fields) : previous_(std::exchange(thread_fields, std::move(fields))) {}

ScopedFields::~ScopedFields()
{
    thread_fields = std::move(previous_);
}

const Fields& currentFields()
{
    return thread_fields;
}

} // namespace framecl::log
