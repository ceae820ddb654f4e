// framecl: the command-line client of framecld.
#include <CLI/CLI.hpp>

#include "base/log.hpp"
#include "config/default_paths.hpp"
#include "process_in_process.hpp"

int main(int argc, char** argv)
{
    CLI::App app{"framecl: run image pipelines on the GPU through framecld"};
    app.require_subcommand(1);
    app.fallthrough(); // --log-level may follow the subcommand too
    std::string log_level = "warn";
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();

    framecl::cli::ProcessRequest request{framecl::config::defaultConfigFile(), {}, {}, {}};
    bool in_process = false;
    auto* process = app.add_subcommand("process", "Run a pipeline on image files; results are written as PNG");
    process->add_option("--pipeline,-p", request.pipeline, "Pipeline name (`copy` always exists)")->required();
    process->add_option("--in,-i", request.inputs, "Input images (PNG, JPEG, PGM, PPM)")->required()->check(CLI::ExistingFile);
    process->add_option("--out,-o", request.output, "Output: a .png file for one input, else a directory")->required();
    process->add_option("--config,-c", request.config_file, "framecld config to take pipelines and device from")
        ->capture_default_str();
    // Until the daemon speaks IPC, `process` runs the pipeline here, in this process;
    // the flag stays afterwards as the way to run without a daemon.
    process->add_flag("--in-process", in_process, "Run the pipeline in this process instead of through framecld")
        ->required();

    CLI11_PARSE(app, argc, argv);
    framecl::log::setup(framecl::log::Sink::Stderr, spdlog::level::from_str(log_level));
    return framecl::cli::processInProcess(request);
}
