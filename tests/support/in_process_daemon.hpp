#pragma once
// framecld's Server in this process, on a GPU context the caller opens (PoCL with a
// vendor table a test wraps, or the Qualcomm emulation), its loop on a thread of its
// own. For doctest suites and fuzz harnesses alike: a setup that fails throws, with
// what failed (doctest reports it as the test's failure, a fuzzer as a crash).

#include <functional>
#include <memory>
#include <csignal>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <thread>

#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "gpu/program_cache.hpp"
#include "ipc/server.hpp"
#include "pipeline/catalog.hpp"
#include "service/service_loop.hpp"
#include "shared_programs.hpp"
#include "temp_dir.hpp"

namespace framecl::test {

// Opens the GPU as the config's [gpu] section asks.
using GpuOpener = std::function<std::unique_ptr<gpu::GpuContext>(const config::GpuConfig&)>;

// A Server on the config `toml` (after [daemon] with the paths in a temp dir) and the
// GPU `open` gives.
class InProcessDaemon {
public:
    InProcessDaemon(const std::string& toml, const GpuOpener& open) : loop_(notifier_) // before PoCL starts its threads
    {
        const auto file = dir_.write("framecld.toml", "[daemon]\n"
                                                      "socket = \"" + socket().string() + "\"\n"
                                                      "buffer_socket = \"" + bufferSocket().string() + "\"\n"
                                                      "cache_dir = \"" + (dir_ / "cache").string() + "\"\n"
                                                      "pipeline_dirs = []\n" + toml);
        auto config = config::loadConfigFile(file, config::defaultPaths());
        if (!config)
            throw std::runtime_error("the test config: " + config.error().joined());
        config_ = std::move(*config);
        gpu_ = open(config_.gpu);
        // Its cache starts with the programs this process compiled before (shared_programs.hpp).
        copyProgramEntries(sharedProgramsDir(), config_.daemon.cache_dir);
        programs_ = std::make_unique<gpu::ProgramCache>(config_.daemon.cache_dir);
        auto set = pipeline::loadPipelineSet(config_, gpu_.get(), programs_.get());
        if (!set.problems.empty())
            throw std::runtime_error("the test pipelines: " + set.problems.front());
        auto server = ipc::Server::start(config_, *gpu_, std::move(set.catalog), loop_);
        if (!server)
            throw std::runtime_error("starting the server: " + server.error().message);
        server_ = std::move(*server);
        serving_ = std::thread([this] { loop_.run([] { return std::string("reloaded"); }); });
    }

    ~InProcessDaemon()
    {
        pthread_kill(serving_.native_handle(), SIGTERM); // the loop reads it from its signalfd
        serving_.join();
        copyProgramEntries(config_.daemon.cache_dir, sharedProgramsDir());
    }

    std::filesystem::path socket() const { return dir_ / "framecl.sock"; }
    std::filesystem::path bufferSocket() const { return dir_ / "buffers.sock"; }
    const config::Config& config() const { return config_; }
    const gpu::GpuContext& gpu() const { return *gpu_; }

private:
    TempDir dir_;
    service::SystemdNotifier notifier_;
    service::ServiceLoop loop_;
    config::Config config_;
    std::unique_ptr<gpu::GpuContext> gpu_;
    std::unique_ptr<gpu::ProgramCache> programs_;
    std::unique_ptr<ipc::Server> server_;
    std::thread serving_;
};

} // namespace framecl::test
