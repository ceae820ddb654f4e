// Plugins through a real daemon: broken plugins are skipped while the rest of the
// pipelines run, `framecl pipelines` shows each pipeline's stages and recording mode,
// and a SIGHUP gives new sessions the new pipeline while open ones keep theirs.
#include <csignal>
#include <filesystem>

#include <doctest/doctest.h>

#include "daemon_fixture.hpp"
#include "framecl/client.h"
#include "memory_fds.hpp"
#include "reference_box.hpp"
#include "reference_offset.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;
using namespace std::chrono_literals;

namespace {

std::string pluginDirs()
{
    return "plugin_dirs = [\"" + requireEnv("FRAMECL_PLUGIN_DIR") + "\", \"" + requireEnv("FRAMECL_TEST_PLUGIN_DIR") +
           "\"]\n";
}

std::string offsetPipelines(int amount)
{
    return "[[pipeline]]\nname = \"shift\"\nstages = [ { plugin = \"offset\", amount = " + std::to_string(amount) +
           " } ]\n"
           "[[pipeline]]\nname = \"broken\"\nstages = [ { plugin = \"broken_kernel\" } ]\n";
}

struct Client {
    framecl_client* handle = nullptr;
    ~Client() { framecl_disconnect(handle); }
};

void connect(const RunningDaemon& daemon, Client& client)
{
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), "plugins-test", 10000};
    REQUIRE_MESSAGE(framecl_connect(&options, &client.handle) == 0, std::string(framecl_last_error(nullptr)));
}

// Runs one R8 frame of `input` through `session` and returns the output bytes.
std::vector<uint8_t> runFrame(framecl_client* client, uint32_t session, const std::vector<uint8_t>& input)
{
    framecl_frame_layout layout{};
    const uint64_t size = framecl_packed_layout(DRM_FORMAT_R8, 32, 8, &layout);
    auto in = sealedMemfd("in", off_t(size));
    auto out = sealedMemfd("out", off_t(size));
    REQUIRE(pwrite(in.get(), input.data(), size, 0) == ssize_t(size));
    uint32_t in_id = 0, out_id = 0;
    REQUIRE(framecl_register_buffer(client, in.get(), &layout, &in_id) == 0);
    REQUIRE(framecl_register_buffer(client, out.get(), &layout, &out_id) == 0);
    REQUIRE(framecl_submit(client, session, in_id, out_id, 1) == 0);
    framecl_done done{};
    REQUIRE(framecl_next_done(client, 20000, &done) == 0);
    REQUIRE_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
    framecl_release_buffer(client, in_id);
    framecl_release_buffer(client, out_id);
    return readMemfd(out.get(), size);
}

} // namespace

TEST_CASE("broken plugins are skipped, named in the log, and the other pipelines run")
{
    RunningDaemon daemon(offsetPipelines(5), pluginDirs() +
                                                 "kernel_dirs = [\"" + (requireSourceRoot() / "kernels").string() +
                                                 "\", \"" + (requireSourceRoot() / "tests" / "plugins").string() + "\"]\n");
    const std::string log = daemon.log();
    CHECK(log.find("wrong_abi") != std::string::npos);
    CHECK(log.find("no_entry") != std::string::npos);
    CHECK(log.find("broken_kernel") != std::string::npos);

    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "--socket", daemon.socket().string(), "pipelines"},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(run.out.find("shift  (recording: khr)") != std::string::npos); // PoCL offers command buffers
    CHECK(run.out.find("offset amount=5") != std::string::npos);
    CHECK(run.out.find("broken") == std::string::npos);

    Client client;
    connect(daemon, client);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client.handle, "shift", DRM_FORMAT_R8, 32, 8, nullptr, 0, &session, nullptr) == 0);
    std::vector<uint8_t> input(256);
    for (size_t i = 0; i < input.size(); ++i)
        input[i] = uint8_t(i);
    CHECK(runFrame(client.handle, session, input) == offsetPlane(input, 5));
}

TEST_CASE("after SIGHUP new sessions get the new pipeline and open ones keep theirs")
{
    const std::string daemon_keys = pluginDirs() + "kernel_dirs = [\"" + (requireSourceRoot() / "kernels").string() +
                                    "\", \"" + (requireSourceRoot() / "tests" / "plugins").string() + "\"]\n";
    RunningDaemon daemon(offsetPipelines(10), daemon_keys);
    Client client;
    connect(daemon, client);
    uint32_t old_session = 0;
    REQUIRE(framecl_open_session(client.handle, "shift", DRM_FORMAT_R8, 32, 8, nullptr, 0, &old_session, nullptr) ==
            0);

    // The new config also uses box, which no pipeline used before: the daemon builds a
    // plugin's programs when a pipeline first uses it, here at the reload.
    daemon.reconfigure(offsetPipelines(20) + "[[pipeline]]\nname = \"smooth\"\nstages = [ { plugin = \"box\" } ]\n",
                       daemon_keys);
    daemon.reload();
    {
        std::vector<uint8_t> ramp(256);
        for (size_t i = 0; i < ramp.size(); ++i)
            ramp[i] = uint8_t(i * 7 % 251);
        Client smoothing;
        connect(daemon, smoothing);
        uint32_t session = 0;
        REQUIRE(framecl_open_session(smoothing.handle, "smooth", DRM_FORMAT_R8, 32, 8, nullptr, 0, &session,
                                     nullptr) == 0);
        CHECK(runFrame(smoothing.handle, session, ramp) == boxFilter(ramp, 32, 8, 1, BoxParams{}));
    }

    std::vector<uint8_t> input(256, 100);
    Client fresh;
    connect(daemon, fresh);
    uint32_t new_session = 0;
    REQUIRE(framecl_open_session(fresh.handle, "shift", DRM_FORMAT_R8, 32, 8, nullptr, 0, &new_session, nullptr) == 0);
    CHECK(runFrame(fresh.handle, new_session, input) == offsetPlane(input, 20));
    CHECK(runFrame(client.handle, old_session, input) == offsetPlane(input, 10));
}

TEST_CASE("with gpu.tuning = off sessions run as configured: nothing is timed, kept or listed")
{
    // The shipped kernels for the prelude, the test plugins' for offset.cl.
    const std::string kernel_dirs = "kernel_dirs = [\"" + (requireSourceRoot() / "kernels").string() + "\", \"" +
                                    (requireSourceRoot() / "tests" / "plugins").string() + "\"]\n";
    RunningDaemon daemon("[gpu]\ntuning = \"off\"\n" + offsetPipelines(7), pluginDirs() + kernel_dirs);
    Client client;
    connect(daemon, client);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client.handle, "shift", DRM_FORMAT_R8, 32, 8, nullptr, 0, &session, nullptr) == 0);
    std::vector<uint8_t> input(256);
    for (size_t i = 0; i < input.size(); ++i)
        input[i] = uint8_t(255 - i);
    CHECK(runFrame(client.handle, session, input) == offsetPlane(input, 7));

    auto run = runToCompletion({requireEnv("FRAMECL_CLI"), "--socket", daemon.socket().string(), "pipelines"},
                               daemon.dir().path());
    REQUIRE_MESSAGE(run.status.code == 0, run.err);
    CHECK(run.out.find("offset amount=7") != std::string::npos);
    CHECK(run.out.find("tuned:") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(daemon.dir().path() / "cache" / "tuning.json"));

    // The same daemon with tuning on (after SIGHUP) tunes the next session and lists it.
    // Time for every candidate on a busy machine: only a whole tuning is written down.
    daemon.reconfigure("[gpu]\ntuning_budget_ms = 600000\n" + offsetPipelines(7), pluginDirs() + kernel_dirs);
    daemon.reload();
    REQUIRE(framecl_open_session(client.handle, "shift", DRM_FORMAT_R8, 32, 8, nullptr, 0, &session, nullptr) == 0);
    CHECK(std::filesystem::exists(daemon.dir().path() / "cache" / "tuning.json"));
    run = runToCompletion({requireEnv("FRAMECL_CLI"), "--socket", daemon.socket().string(), "pipelines"},
                          daemon.dir().path());
    CHECK(run.out.find("tuned: stage 1 (offset) on R8 32x8: ") != std::string::npos);
}
