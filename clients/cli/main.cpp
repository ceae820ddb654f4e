// framecl: the command-line client of framecld.
#include <CLI/CLI.hpp>

#include <framecl/format.h>

#include "base/log.hpp"
#include "config/default_paths.hpp"
#include "daemon_commands.hpp"
#include "process_in_process.hpp"
#include "process_through_daemon.hpp"

int main(int argc, char** argv)
{
    CLI::App app{"framecl: run image pipelines on the GPU through framecld"};
    app.require_subcommand(1);
    app.fallthrough(); // the options below may follow the subcommand too
    std::string log_level = "warn";
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
    framecl::cli::DaemonOptions daemon{"", 5000, "framecl"};
    app.add_option("--socket", daemon.socket,
                   "framecld's socket (default: $FRAMECL_SOCKET, else " FRAMECL_DEFAULT_SOCKET ")");
    app.add_option("--timeout", daemon.timeout_ms,
                   "Milliseconds to wait for framecld: to connect, per request, per frame")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);

    framecl::cli::ProcessRequest request{framecl::config::defaultConfigFile(), {}, {}, {}};
    framecl::cli::RawInputFormat raw;
    bool in_process = false;
    auto* process = app.add_subcommand("process", "Run a pipeline on files; results are written as PNG, or raw planes "
                                                  "where PNG cannot hold the output format (NV12, R16)");
    process->add_option("--pipeline,-p", request.pipeline, "Pipeline name (`copy` always exists)")->required();
    process->add_option("--in,-i", request.inputs, "Input images (PNG, JPEG, PGM, PPM), or raw planes with --format")
        ->required()
        ->check(CLI::ExistingFile);
    process->add_option("--out,-o", request.output, "Output: a .png or .raw file for one input, else a directory")
        ->required();
    // The flag runs the pipeline in this process, on the device framecld would pick,
    // from framecld's config: the way to run without a daemon.
    auto* in_process_flag =
        process->add_flag("--in-process", in_process, "Run the pipeline in this process instead of through framecld");
    process->add_option("--config,-c", request.config_file, "With --in-process: the framecld config to take pipelines "
                                                            "and device from")
        ->capture_default_str();
    auto* format = process->add_option("--format", raw.format, "Inputs are raw planes, tightly packed, of this format")
                       ->check(CLI::Validator(
                           [](const std::string& name) {
                               return framecl_format_from_name(name.c_str())
                                          ? std::string()
                                          : "not a format framecl knows: nv12, r8, r16, abgr8888, abgr16161616, or a "
                                            "Bayer format (srggb8 ... sgbrg12p, docs/filters.md)";
                           },
                           "FORMAT"))
                       ->excludes(in_process_flag);
    process->add_option("--size", raw.size, "Size of the raw inputs, WIDTHxHEIGHT")->needs(format);
    format->needs("--size");

    auto* pipelines = app.add_subcommand("pipelines", "List the pipelines framecld offers, with their stages");
    auto* devices = app.add_subcommand("devices", "Show the OpenCL device framecld uses");
    bool stats_json = false;
    auto* stats = app.add_subcommand("stats", "Show framecld's statistics per client and session");
    stats->add_flag("--json", stats_json, "Print the JSON as framecld sends it, on one line");
    uint32_t trace_seconds = 5;
    std::string trace_output;
    auto* trace = app.add_subcommand("trace", "Record framecld's GPU dispatches for a while as Chrome trace JSON, "
                                              "which ui.perfetto.dev and chrome://tracing open");
    trace->add_option("--seconds,-s", trace_seconds, "How long to record, 1 to 60")
        ->capture_default_str()
        ->check(CLI::Range(1, 60));
    trace->add_option("--out,-o", trace_output, "The file to write, replaced only once the trace is complete; "
                                                "- for stdout")
        ->required();

    CLI11_PARSE(app, argc, argv);
    framecl::log::setup(framecl::log::Sink::Stderr, spdlog::level::from_str(log_level));
    if (process->parsed())
        return in_process ? framecl::cli::processInProcess(request)
                          : framecl::cli::processThroughDaemon(request, raw, daemon);
    if (pipelines->parsed())
        return framecl::cli::listPipelines(daemon);
    if (devices->parsed())
        return framecl::cli::showDevice(daemon);
    if (trace->parsed())
        return framecl::cli::recordTrace(daemon, trace_seconds, trace_output);
    return framecl::cli::showStats(daemon, stats_json); // require_subcommand(1) leaves only `stats`
}
