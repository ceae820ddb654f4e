#pragma once
// framecld's Server in this process, on a GPU context the test opens (PoCL with a
// vendor table the test wraps, or the Qualcomm emulation), its loop on a thread of its
// own. Clients are libframecl over the real sockets.

#include <functional>
#include <memory>
#include <pthread.h>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "daemon_client.hpp"
#include "gpu/program_cache.hpp"
#include "ipc/server.hpp"
#include "pipeline/catalog.hpp"
#include "service/service_loop.hpp"
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
                                                      "buffer_socket = \"" + (dir_ / "buffers.sock").string() + "\"\n"
                                                      "cache_dir = \"" + (dir_ / "cache").string() + "\"\n"
                                                      "pipeline_dirs = []\n" + toml);
        auto config = config::loadConfigFile(file, config::defaultPaths());
        REQUIRE_MESSAGE(config.has_value(), (config ? "" : config.error().joined()));
        config_ = std::move(*config);
        gpu_ = open(config_.gpu);
        programs_ = std::make_unique<gpu::ProgramCache>(config_.daemon.cache_dir);
        auto set = pipeline::loadPipelineSet(config_, gpu_.get(), programs_.get());
        REQUIRE(set.problems.empty());
        auto server = ipc::Server::start(config_, *gpu_, std::move(set.catalog), loop_);
        REQUIRE_MESSAGE(server.has_value(), (server ? "" : server.error().message));
        server_ = std::move(*server);
        serving_ = std::thread([this] { loop_.run([] { return std::string("reloaded"); }); });
    }

    ~InProcessDaemon()
    {
        pthread_kill(serving_.native_handle(), SIGTERM); // the loop reads it from its signalfd
        serving_.join();
    }

    std::filesystem::path socket() const { return dir_ / "framecl.sock"; }
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

// A libframecl client of `daemon`, named `name`.
inline Client connectAs(const InProcessDaemon& daemon, const char* name)
{
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), name, 5000};
    Client client;
    REQUIRE_MESSAGE(framecl_connect(&options, &client.handle) == 0, framecl_last_error(nullptr));
    return client;
}

// A session of `copy` on ABGR8888 frames of `width` x `height`; its output layout in `out`.
inline uint32_t openCopy(framecl_client* client, uint32_t width, uint32_t height, framecl_frame_layout* out)
{
    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session(client, "copy", DRM_FORMAT_ABGR8888, width, height, nullptr, 0, &session,
                                         out) == 0,
                    std::string(framecl_last_error(client)));
    return session;
}

} // namespace framecl::test
