// framecld: wiring only. Parses the command line, loads the config, opens the GPU and
// runs the service loop; every piece of logic lives in a component.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/log.hpp"
#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "framecl_build_config.h"
#include "gpu/context.hpp"
#include "gpu/device_report.hpp"
#include "ipc/server.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/compile_ahead.hpp"
#include "pipeline/engine.hpp"
#include "selftest/self_test.hpp"
#include "service/service_loop.hpp"
#include "service/socket_activation.hpp"

namespace {

using namespace framecl;

tl::expected<config::Config, config::ConfigErrors> load(const std::filesystem::path& file)
{
    return config::loadConfigFile(file, config::defaultPaths());
}

// The TOML, then every pipeline against the plugins (their schemas and formats; the
// kernels are built only by a running daemon, which has a device).
int checkConfig(const std::filesystem::path& file)
{
    auto config = load(file);
    if (!config) {
        fmt::print(stderr, "{}\n", config.error().joined());
        return 1;
    }
    const auto set = pipeline::loadPipelineSet(*config, nullptr, nullptr);
    for (const auto& problem : set.problems)
        fmt::print(stderr, "{}\n", problem);
    if (!set.problems.empty())
        return 1;
    fmt::print("{}: OK ({} pipelines)\n", file.string(), set.catalog.pipelines.size());
    return 0;
}

// The catalog of `set`; what was refused is logged, the rest served.
pipeline::Catalog loggedCatalog(pipeline::PipelineSet set)
{
    for (const auto& problem : set.problems)
        log::get("pipeline")->error("{}", problem);
    return std::move(set.catalog);
}

// framecld --self-test: the report on stdout; 0 unless a check failed.
int selfTest(const config::Config& config, bool json)
{
    const selftest::Report report = selftest::runSelfTest(config);
    if (json)
        fmt::print("{}\n", selftest::reportJson(report).dump(2));
    else
        fmt::print("{}", selftest::reportText(report));
    return report.failed() ? 1 : 0;
}

int listDevices(const config::Config& config, bool json)
{
    const auto reports = gpu::collectDeviceReports(config.gpu);
    if (json)
        fmt::print("{}\n", gpu::describeDevicesJson(reports).dump(2));
    else
        fmt::print("{}", gpu::describeDevicesText(reports));
    return reports.empty() ? 1 : 0;
}

// framecld --compile-ahead: the helper of pipeline/compile_ahead.hpp. Prints the count of
// candidates compiled after each; exits 0 once every one has run.
int compileAhead(const config::Config& config, const std::string& name, size_t stage, const std::vector<uint32_t>& frame)
{
    auto engine = pipeline::startEngine(config);
    if (!engine) {
        log::get("daemon")->critical("{}", engine.error().message);
        return 1;
    }
    const auto definition = engine->pipelines.catalog.find(name);
    if (!definition || stage == 0) {
        log::get("daemon")->critical("no pipeline '{}' with a stage {}", name, stage);
        return 1;
    }
    const auto compiled = pipeline::compileCandidates(*engine->gpu, *definition, stage - 1, {frame[0], frame[1], frame[2]},
                                                      uint64_t(config.gpu.kernel_budget_ms * 1e6), [](size_t done) {
                                                          fmt::print("{}\n", done);
                                                          std::fflush(stdout);
                                                      });
    if (!compiled) {
        log::get("daemon")->critical("{}", compiled.error().message);
        return 1;
    }
    return 0;
}

std::string readyStatus(const ipc::Server& server, const gpu::GpuContext& gpu)
{
    return fmt::format("{} pipelines on {}", server.catalog().pipelines.size(), gpu.capabilities().name);
}

int serve(config::Config config, const std::filesystem::path& file)
{
    auto logger = log::get("daemon");
    service::SystemdNotifier notifier;
    // Before any thread starts: it unsets $LISTEN_FDS.
    auto activated = service::takeActivatedSockets(config.daemon.socket, config.daemon.buffer_socket);
    if (!activated) {
        logger->critical("{}", activated.error().message);
        notifier.status("failed: " + activated.error().message);
        return 1;
    }
    service::ServiceLoop loop(notifier); // before any thread starts: it blocks the signals

    auto engine = pipeline::startEngine(config);
    if (!engine) {
        logger->critical("{}", engine.error().message);
        notifier.status("failed: " + engine.error().message);
        return 1;
    }
    const gpu::GpuContext& gpu = *engine->gpu;
    // The tuner runs this program again to compile kernels ahead (pipeline/compile_ahead.hpp).
    auto server = ipc::Server::start(config, gpu, loggedCatalog(std::move(engine->pipelines)), loop,
                                     std::move(*activated), "/proc/self/exe");
    if (!server) {
        logger->critical("{}", server.error().message);
        notifier.status("failed: " + server.error().message);
        return 1;
    }

    notifier.ready(readyStatus(**server, gpu));
    logger->info("framecld {} ready: {}", FRAMECL_VERSION, readyStatus(**server, gpu));

    const int exit_status = loop.run([&]() {
        auto fresh = load(file);
        if (!fresh) {
            logger->error("reload: keeping the running configuration; the new one has errors:\n{}",
                          fresh.error().joined());
            return readyStatus(**server, gpu) + " (reload failed, old config kept)";
        }
        if (fresh->gpu.device != config.gpu.device)
            logger->warn("reload: gpu.device changed to '{}'; a device change takes effect on restart",
                         fresh->gpu.device);
        if (auto reloaded = (*server)->reload(
                *fresh, loggedCatalog(pipeline::loadPipelineSet(*fresh, &gpu, engine->programs.get())));
            !reloaded) {
            logger->error("reload: keeping the running configuration: {}", reloaded.error().message);
            return readyStatus(**server, gpu) + " (reload failed, old config kept)";
        }
        config = std::move(*fresh);
        logger->info("reload: {}", readyStatus(**server, gpu));
        return readyStatus(**server, gpu);
    });
    if (exit_status == 0)
        (*server)->drain(std::chrono::seconds(5));
    return exit_status;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecld: the framecl GPU image-processing daemon"};
    std::filesystem::path config_file = config::defaultConfigFile();
    std::filesystem::path check_file;
    bool list_devices = false, self_test = false, json = false, version = false;
    std::string log_level = "info";
    app.add_option("--check-config", check_file, "Validate a configuration file and exit (0: valid)");
    auto* config_option = app.add_option("--config,-c", config_file, "Configuration file")->capture_default_str();
    app.add_flag("--list-devices", list_devices, "List OpenCL devices and their capabilities");
    app.add_flag("--self-test", self_test,
                              "Check every path the configured device offers against CPU references, report, and "
                              "exit (0: nothing failed)");
    app.add_flag("--json", json, "With --list-devices or --self-test: print JSON");
    app.add_flag("--version", version, "Print the version and exit");
    std::string compile_pipeline;
    size_t compile_stage = 0;
    std::vector<uint32_t> compile_frame;
    auto* compile = app.add_option("--compile-ahead", compile_pipeline,
                                   "Compile the tuning candidates of a stage of this pipeline into the OpenCL "
                                   "driver's cache and exit (framecld runs itself so; see --stage, --frame)");
    app.add_option("--stage", compile_stage, "With --compile-ahead: the stage, from 1")->needs(compile);
    app.add_option("--frame", compile_frame, "With --compile-ahead: the stage's input: FOURCC WIDTH HEIGHT")
        ->expected(3)
        ->needs(compile);
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    if (version) {
        fmt::print("framecld {}\n", FRAMECL_VERSION);
        return 0;
    }
    if (json && !list_devices && !self_test) {
        fmt::print(stderr, "--json needs --list-devices or --self-test\n");
        return 1;
    }
    log::setup(log::Sink::Auto, spdlog::level::from_str(log_level));
    if (!check_file.empty())
        return checkConfig(check_file);

    // --list-devices and --self-test are what to run on a new board, which may have no
    // config file yet: without --config and without the default file they take the
    // defaults.
    auto config = (list_devices || self_test) && config_option->count() == 0 && !std::filesystem::exists(config_file)
                      ? config::parseConfig("", config_file, config::defaultPaths())
                      : load(config_file);
    if (!config) {
        fmt::print(stderr, "{}\n", config.error().joined());
        return 1;
    }
    if (list_devices)
        return listDevices(*config, json);
    if (self_test)
        return selfTest(*config, json);
    if (!compile_pipeline.empty()) {
        if (compile_frame.size() != 3) {
            fmt::print(stderr, "--compile-ahead needs --stage and --frame FOURCC WIDTH HEIGHT\n");
            return 1;
        }
        return compileAhead(*config, compile_pipeline, compile_stage, compile_frame);
    }

    try {
        return serve(std::move(*config), config_file);
    } catch (const std::exception& e) {
        log::get("daemon")->critical("{}", e.what());
        return 1;
    }
}
