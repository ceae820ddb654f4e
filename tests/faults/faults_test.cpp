// A real framecld whose OpenCL calls fail on demand (opencl_faults.cpp, preloaded), one
// whose kernel stops building at a reload, and one whose cache directory turns
// read-only and fills up under it (a tmpfs in a mount namespace of its own). Each
// fault fails only the frames it touches, with a Done that says what failed; the other
// client's frames go on, and nothing is left behind. A lost device ends every frame
// and framecld exits with EX_UNAVAILABLE, for the service manager to start it again
// (docs/architecture.md, "A failed frame and a lost GPU").

#include <doctest/doctest.h>

#include <CL/cl.h>
#include <drm_fourcc.h>
#include <fcntl.h>
#include <sysexits.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>

#include "child_process.hpp"
#include "daemon_client.hpp"
#include "daemon_fixture.hpp"
#include "reference_color.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace framecl::reference;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t width = 64, height = 48;

// One client with one session and a buffer pair, checking each frame that comes back
// Ok against the CPU reference: `luma` (kernel abgr_to_y) or `copy` (copy_plane).
class Stream {
public:
    Stream(const RunningDaemon& daemon, const char* name, const char* pipeline)
        : client_(connectTo(daemon, name)), luma_(std::string(pipeline) == "luma")
    {
        const uint32_t fourcc = luma_ ? DRM_FORMAT_ABGR8888 : DRM_FORMAT_R8;
        const auto in_layout = packed(fourcc, width, height, &in_size_);
        framecl_frame_layout out_layout{};
        REQUIRE_MESSAGE(framecl_open_session(client_, pipeline, fourcc, width, height, nullptr, 0, &session_,
                                             &out_layout) == 0,
                        std::string(framecl_last_error(client_)));
        out_size_ = framecl_layout_end(&out_layout);
        input_ = registerMemfd(client_, in_layout, in_size_, input_fd_);
        output_ = registerMemfd(client_, out_layout, out_size_, output_fd_);
    }

    // Submits a frame of random bytes and returns its Done; one that is Ok must hold
    // the reference output.
    framecl_done frame()
    {
        std::vector<uint8_t> sent(in_size_);
        for (auto& byte : sent)
            byte = uint8_t(random_());
        REQUIRE(pwrite(input_fd_.get(), sent.data(), sent.size(), 0) == ssize_t(sent.size()));
        REQUIRE(framecl_submit(client_, session_, input_, output_, ++sequence_) == 0);
        const framecl_done done = nextDone(client_);
        CHECK(done.sequence == sequence_);
        if (done.status == FRAMECL_FRAME_OK)
            CHECK(readMemfd(output_fd_.get(), out_size_) == (luma_ ? lumaPlane(sent) : sent));
        return done;
    }

    // `count` frames, each of which must come back Ok.
    void framesOk(int count)
    {
        for (int i = 0; i < count; ++i) {
            const framecl_done done = frame();
            CHECK_MESSAGE(done.status == FRAMECL_FRAME_OK, done.error);
        }
    }

    framecl_client* client() const { return client_; }
    uint32_t session() const { return session_; }

private:
    Client client_;
    bool luma_;
    uint64_t in_size_ = 0, out_size_ = 0;
    uint32_t session_ = 0, input_ = 0, output_ = 0;
    framecl::UniqueFd input_fd_, output_fd_;
    uint64_t sequence_ = 0;
    std::mt19937 random_{7};
};

// A daemon serving `luma` with the fault library preloaded, its faults read from a
// file in its directory.
struct FaultyDaemon {
    explicit FaultyDaemon(const std::string& extra_toml = "")
        : faults_file(directory.path() / "opencl-faults"),
          daemon(luma_pipeline + extra_toml, "",
                 {{"LD_PRELOAD", requireEnv("FRAMECL_OPENCL_FAULTS_LIBRARY")},
                  {"FRAMECL_OPENCL_FAULTS", faults_file.string()}})
    {
    }

    // What the next OpenCL calls of the daemon fail with (opencl_faults.cpp); "" for none.
    void arm(const std::string& faults) const
    {
        std::ofstream(faults_file) << faults << "\n";
    }

    TempDir directory;
    std::filesystem::path faults_file;
    RunningDaemon daemon;
};

// The daemon's open file descriptors.
size_t openFds(pid_t pid)
{
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
        ++count;
    return count;
}

const nlohmann::json& sessionStats(const nlohmann::json& stats, const std::string& client_name)
{
    for (const auto& client : stats["clients"])
        if (client["name"] == client_name)
            return client["sessions"].at(0);
    FAIL("no client " << client_name << " in the stats");
    throw; // unreachable: FAIL throws
}

// With `fault` armed on the victim's kernel, abgr_to_y, three of its frames fail with
// a Done whose error begins with `error`, while a bystander's frames run; once the
// fault is gone they run again. The device still works throughout.
void victimFailsAlone(const std::string& fault, const std::string& error)
{
    // Without a recording each frame enqueues its kernels one by one.
    FaultyDaemon faulty("[gpu]\nrecording = \"off\"\n");
    Stream victim(faulty.daemon, "victim", "luma");
    Stream bystander(faulty.daemon, "bystander", "copy");
    victim.framesOk(2);

    faulty.arm(fault + " abgr_to_y " + std::to_string(CL_OUT_OF_RESOURCES));
    for (int i = 0; i < 3; ++i) {
        const framecl_done done = victim.frame();
        CHECK(done.status == FRAMECL_FRAME_FAILED);
        CHECK_MESSAGE(std::string(done.error).starts_with(error), done.error);
        bystander.framesOk(1);
    }
    faulty.arm("");
    victim.framesOk(3);

    const auto now = stats(victim.client());
    const auto& session = sessionStats(now, "victim");
    CHECK(session["frames_failed"] == 3);
    CHECK(session["frames_done"] == 5);
    CHECK(session["frames_in_flight"] == 0);
    CHECK(sessionStats(now, "bystander")["frames_failed"] == 0);
    CHECK(contains(faulty.daemon.log(), "the device still runs work"));
}

} // namespace

TEST_CASE("a failing clEnqueueNDRangeKernel fails only its session's frames, and names the call and error")
{
    victimFailsAlone("enqueue", "clEnqueueNDRangeKernel failed: CL_OUT_OF_RESOURCES (-5) [stage 1 (color op=abgr_to_y)");
}

TEST_CASE("a frame whose event ends with CL_OUT_OF_RESOURCES fails alone; the device still runs the others")
{
    victimFailsAlone("status", "the GPU failed the frame: CL_OUT_OF_RESOURCES");
}

TEST_CASE("a buffer the GPU cannot import or create is refused with the call and error, and its fd is not kept")
{
    FaultyDaemon faulty;
    Stream bystander(faulty.daemon, "bystander", "copy");
    Client client = connectTo(faulty.daemon, "importer");
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_R8, width, height, &size);
    const framecl::UniqueFd fd = sealedMemfd("faults-test", off_t(size));
    const size_t fds_before = openFds(faulty.daemon.pid());

    // PoCL imports a memfd as a host pointer (CL_MEM_USE_HOST_PTR).
    faulty.arm("create_buffer 8 " + std::to_string(CL_MEM_OBJECT_ALLOCATION_FAILURE));
    uint32_t id = 0;
    CHECK(framecl_register_buffer(client, fd.get(), &layout, &id) < 0);
    const std::string error = framecl_last_error(client);
    CHECK_MESSAGE(contains(error, "clCreateBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE"), error);
    CHECK(openFds(faulty.daemon.pid()) == fds_before);
    bystander.framesOk(3);

    // Every buffer: a session cannot be opened, and says why.
    faulty.arm("create_buffer 0 " + std::to_string(CL_MEM_OBJECT_ALLOCATION_FAILURE));
    uint32_t session = 0;
    CHECK(framecl_open_session(client, "luma", DRM_FORMAT_ABGR8888, width, height, nullptr, 0, &session, nullptr) < 0);
    const std::string open_error = framecl_last_error(client);
    CHECK_MESSAGE(contains(open_error, "clCreateBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE"), open_error);
    bystander.framesOk(3);

    faulty.arm("");
    CHECK_MESSAGE(framecl_register_buffer(client, fd.get(), &layout, &id) == 0,
                  std::string(framecl_last_error(client)));
    const auto now = stats(client);
    for (const auto& each : now["clients"])
        if (each["name"] == "importer") {
            CHECK(each["buffers"] == 1);
            CHECK(each["sessions"].empty());
            CHECK(each["session_bytes"] == 0);
        }
}

TEST_CASE("a lost GPU fails every frame with the reason, and framecld exits with EX_UNAVAILABLE to be restarted")
{
    FaultyDaemon faulty;
    Stream victim(faulty.daemon, "victim", "luma");
    Stream bystander(faulty.daemon, "bystander", "copy");
    victim.framesOk(2);
    bystander.framesOk(2);

    faulty.arm("lost");
    // Every frame from now on fails, whichever client sent it; the first failure's
    // probe finds the device lost.
    const framecl_done first = victim.frame();
    CHECK(first.status != FRAMECL_FRAME_OK);
    const auto exited = faulty.daemon.waitForExit(20s);
    REQUIRE_MESSAGE(exited, "framecld still runs after its GPU was lost:\n" << faulty.daemon.log());
    CHECK(exited->exited);
    CHECK(exited->code == EX_UNAVAILABLE);
    const std::string log = faulty.daemon.log();
    CHECK_MESSAGE(contains(log, "the GPU is lost (clEnqueueFillBuffer failed: CL_OUT_OF_RESOURCES"), log);
    CHECK(faulty.daemon.notify().waitFor("STATUS=failed: the GPU is lost", 1s));

    // What systemd does on the failure (framecld.service: Restart=on-failure), on a
    // device that works again: the clients' sessions come back and their frames run.
    faulty.arm("");
    faulty.daemon.start();
    victim.framesOk(3);
    bystander.framesOk(3);
}

namespace {

// A copy of the kernel directory in `directory`, with `appended` at the end of color.cl.
std::filesystem::path kernelsWithColorEdited(const std::filesystem::path& directory, const std::string& appended)
{
    const std::filesystem::path kernels = directory / "kernels-edited";
    std::filesystem::remove_all(kernels);
    std::filesystem::copy(requireSourceRoot() / "kernels", kernels);
    std::ofstream(kernels / "color.cl", std::ios::app) << appended;
    return kernels;
}

std::string kernelDirsKey(const std::filesystem::path& kernels)
{
    return "kernel_dirs = [\"" + kernels.string() + "\"]\n";
}

std::string openError(framecl_client* client, const char* pipeline, uint32_t fourcc)
{
    uint32_t session = 0;
    CHECK(framecl_open_session(client, pipeline, fourcc, width, height, nullptr, 0, &session, nullptr) < 0);
    return framecl_last_error(client);
}

} // namespace

TEST_CASE("a kernel that no longer builds at a reload takes its pipeline out; open sessions and the rest go on")
{
    RunningDaemon daemon(luma_pipeline);
    Stream running(daemon, "running", "luma");
    running.framesOk(2);

    daemon.reconfigure(luma_pipeline, kernelDirsKey(kernelsWithColorEdited(daemon.dir().path(), "\nnot OpenCL\n")));
    daemon.reload();
    const std::string log = daemon.log();
    CHECK_MESSAGE(contains(log, "clBuildProgram failed"), log);

    // Opened before, it keeps the programs it was opened with.
    running.framesOk(3);
    Client client = connectTo(daemon, "late");
    const std::string error = openError(client, "luma", DRM_FORMAT_ABGR8888);
    CHECK_MESSAGE(contains(error, "pipeline 'luma' is not offered: "), error);
    CHECK_MESSAGE(contains(error, "stage 1 (color): the plugin's kernels did not build"), error);
    Stream copy(daemon, "copy", "copy");
    copy.framesOk(3);

    // Mended, it is offered again.
    daemon.reconfigure(luma_pipeline);
    daemon.reload();
    Stream again(daemon, "again", "luma");
    again.framesOk(3);
}

TEST_CASE("a cache directory that turns read-only, then fills up, costs warnings, not frames" *
          doctest::skip(geteuid() != 0))
{
    // framecld in a mount namespace of its own (unshare(1), which needs root), with its
    // cache directory, next to its config, a 128 MiB tmpfs there (PoCL's binaries of
    // the eight kernel files take some 25 MB).
    const std::vector<std::string> launcher{
        "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
        "for config; do :; done; cache=$(dirname \"$config\")/cache; "
        "mkdir -p \"$cache\" && mount -t tmpfs -o size=128m framecl-test-cache \"$cache\" && exec \"$@\"",
        "sh"};
    RunningDaemon daemon(luma_pipeline, "", {}, 60s, launcher);
    const std::string cache = (daemon.dir().path() / "cache").string();
    // The tmpfs as the daemon sees it.
    const std::filesystem::path seen = "/proc/" + std::to_string(daemon.pid()) + "/root" + cache;
    const auto remount = [&](const char* options) {
        const auto run = runToCompletion({"/usr/bin/nsenter", "--target", std::to_string(daemon.pid()), "--mount",
                                          "/bin/mount", "-o", options, cache},
                                         daemon.dir().path(), 30s);
        REQUIRE_MESSAGE(run.status.code == 0, run.err);
    };
    const auto openLuma = [&](framecl_client* client, uint32_t w, uint32_t h) {
        uint32_t session = 0;
        REQUIRE_MESSAGE(framecl_open_session(client, "luma", DRM_FORMAT_ABGR8888, w, h, nullptr, 0, &session, nullptr) == 0,
                        std::string(framecl_last_error(client)));
    };
    Stream first(daemon, "first", "luma");
    first.framesOk(2);
    REQUIRE(std::filesystem::exists(seen / "tuning.json")); // its session's tuning, kept

    // Read-only: a reload whose edited kernel misses the program cache builds it from
    // source and serves it, and a session of a new size is tuned with its choices not
    // kept.
    remount("remount,ro");
    daemon.reconfigure(luma_pipeline, kernelDirsKey(kernelsWithColorEdited(daemon.dir().path(), "\n// edited\n")));
    daemon.reload();
    CHECK_MESSAGE(contains(daemon.log(), "program cache disabled, building from source: cannot create a file in"),
                  daemon.log());
    Client second = connectTo(daemon, "second");
    openLuma(second, 96, 64);
    CHECK(contains(daemon.log(), "tuning choices not kept: cannot create a file in"));
    CHECK(contains(daemon.log(), "Read-only file system"));
    Stream third(daemon, "third", "luma");
    third.framesOk(3);
    first.framesOk(2);

    // Full: writable again, but no space left.
    remount("remount,rw");
    {
        const framecl::UniqueFd filler(open((seen / "filler").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        REQUIRE(filler.valid());
        const std::vector<char> block(1 << 16);
        while (write(filler.get(), block.data(), block.size()) > 0) {
        }
        REQUIRE(errno == ENOSPC);
    }
    openLuma(second, 80, 60);
    CHECK_MESSAGE(contains(daemon.log(), "No space left on device"), daemon.log());
    first.framesOk(2);
    third.framesOk(2);
}
