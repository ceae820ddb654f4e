// The guest's one framecld (guest_daemon.hpp).
#include "guest_daemon.hpp"

#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>

#include "temp_dir.hpp"

namespace framecl::test {

namespace {

// Its config, for every case, with the shipped camera-isp pipelines after it:
// - the colour plugin, and the ISP's for camera-isp: each program a plugin builds costs
//   a minute of the emulated CPU the first time (PoCL's cache keeps them from run to
//   run), so no other;
// - no tuning, which would build and run variants there;
// - a kernel budget no frame here reaches, so that no frame is cut into tiles: PoCL
//   compiles a kernel for each work-group size, and a tile's height, from a budget
//   calibrated on a loaded emulated CPU, would bring new sizes from run to run;
// - a fence limit of 8 s (fence_test.cpp): room for another client's frames beside a
//   waiting one, on a loaded machine's emulated CPU;
// - cl_khr_external_semaphore_sync_fd emulated (semaphore_emulation.cpp), for the
//   release fences; nothing else asks for a semaphore.
const std::string config = "[gpu]\ntuning = \"off\"\nkernel_budget_ms = 1000\n"
                           "[limits]\nmax_fence_wait_ms = 8000\n"
                           "[[pipeline]]\nname = \"luma\"\n"
                           "stages = [ { plugin = \"color\", op = \"abgr_to_y\" } ]\n"
                           "[[pipeline]]\nname = \"rgb\"\n"
                           "stages = [ { plugin = \"color\", op = \"nv12_to_abgr\" } ]\n";

struct GuestDaemon {
    TempDir plugins;
    std::unique_ptr<RunningDaemon> daemon;
};

GuestDaemon& guest()
{
    static GuestDaemon state;
    return state;
}

} // namespace

const RunningDaemon& guestDaemon()
{
    static bool tried = false;
    GuestDaemon& state = guest();
    if (state.daemon)
        return *state.daemon;
    REQUIRE_MESSAGE(!tried, "the guest's framecld did not start in an earlier case");
    tried = true;
    const auto plugin_dir = state.plugins / "plugins";
    std::filesystem::create_directories(plugin_dir);
    for (const char* plugin : {"color", "bayer", "demosaic", "ccm", "tone"}) {
        const std::string file = std::string("framecl-") + plugin + ".so";
        std::filesystem::create_symlink(std::filesystem::path(requireEnv("FRAMECL_PLUGIN_DIR")) / file,
                                        plugin_dir / file);
    }
    std::ifstream isp(requireSourceRoot() / "config/pipelines.d/camera-isp.toml");
    std::stringstream isp_pipelines;
    isp_pipelines << isp.rdbuf();
    state.daemon = std::make_unique<RunningDaemon>(
        config + isp_pipelines.str(), "plugin_dirs = [\"" + plugin_dir.string() + "\"]\n",
        std::map<std::string, std::string>{{"LD_PRELOAD", requireEnv("FRAMECL_SEMAPHORE_EMULATION")}}, guest_wait);
    return *state.daemon;
}

std::string stopGuestDaemon()
{
    GuestDaemon& state = guest();
    if (!state.daemon)
        return "";
    RunningDaemon& daemon = *state.daemon;
    kill(daemon.pid(), SIGTERM);
    const auto status = daemon.waitForExit(std::chrono::seconds(30));
    std::string problem;
    if (!status) {
        problem = "the guest's framecld did not stop within 30 s of SIGTERM";
        kill(daemon.pid(), SIGKILL);
        daemon.waitForExit(std::chrono::seconds(30));
    }
    else if (!status->exited || status->code != 0)
        problem = "the guest's framecld did not exit cleanly on SIGTERM (" +
                  std::string(status->exited ? "exit code " : "signal ") + std::to_string(status->code) + ")";
    if (!problem.empty())
        problem += ":\n" + daemon.log();
    state.daemon.reset();
    return problem;
}

} // namespace framecl::test
