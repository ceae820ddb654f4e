// framecld's Server in this process, on PoCL, with its vendor table wrapped so that
// a command-buffer enqueue fails when the test says: frames that fail as they start,
// which no real PoCL does on demand. The client is libframecl over the real sockets.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "gpu/device_selection.hpp"
#include "gpu_test_support.hpp"
#include "in_process_clients.hpp"

using namespace framecl;
using namespace framecl::test;
using namespace std::chrono_literals;

namespace {

// clEnqueueCommandBufferKHR with faults on demand: while `failing` is set, an enqueue
// fails with CL_OUT_OF_RESOURCES; with a `gate`, the next enqueue waits for that user
// event as well as for what the caller names, and stays on the GPU until the test
// completes it.
struct FaultyEnqueue {
    static inline clEnqueueCommandBufferKHR_fn real = nullptr;
    static inline std::atomic<bool> failing = false;
    static inline std::atomic<cl_event> gate = nullptr;

    static cl_int CL_API_CALL enqueue(cl_uint num_queues, cl_command_queue* queues, cl_command_buffer_khr buffer,
                                      cl_uint num_events, const cl_event* wait_list, cl_event* event)
    {
        if (failing)
            return CL_OUT_OF_RESOURCES;
        if (const cl_event held = gate.exchange(nullptr)) {
            std::vector<cl_event> waits(wait_list, wait_list + num_events);
            waits.push_back(held);
            return real(num_queues, queues, buffer, cl_uint(waits.size()), waits.data(), event);
        }
        return real(num_queues, queues, buffer, num_events, wait_list, event);
    }
};

std::unique_ptr<gpu::GpuContext> openPoclWithFaults(const config::GpuConfig& config)
{
    REQUIRE(config.recording == config::RecordingMode::Auto); // khr on PoCL: frames go through clEnqueueCommandBufferKHR
    const auto candidates = gpu::enumerateDevices();
    const auto chosen = gpu::chooseDevice(candidates, pocl_device);
    REQUIRE(chosen.has_value());
    const gpu::DeviceCandidate& candidate = candidates[*chosen];
    gpu::VendorEntryPoints table = gpu::resolveVendorEntryPoints(candidate.platform);
    REQUIRE(bool(table.clEnqueueCommandBufferKHR));
    FaultyEnqueue::real = table.clEnqueueCommandBufferKHR;
    table.clEnqueueCommandBufferKHR = FaultyEnqueue::enqueue;
    auto gpu = gpu::openGpu(candidate, gpu::readCapabilities(candidate.device), table, config);
    REQUIRE_MESSAGE(gpu.has_value(), (gpu ? "" : gpu.error().message));
    return std::move(*gpu);
}

// Completes a user event when it goes, if nothing did before.
struct OpenedAtExit {
    cl::UserEvent& gate;
    ~OpenedAtExit() { gate.setStatus(CL_COMPLETE); }
};

} // namespace

TEST_CASE("a frame that fails as it starts ends failed, and the Submits held behind it still follow in order")
{
    InProcessDaemon daemon("[limits]\nmax_inflight_per_client = 2\n", openPoclWithFaults);
    Client client = connectAs(daemon, "faults");
    constexpr uint32_t width = 64, height = 48;
    framecl_frame_layout out_layout{};
    const uint32_t session = openCopy(client, width, height, &out_layout);
    uint64_t bytes = 0;
    const auto in_layout = packed(DRM_FORMAT_ABGR8888, width, height, &bytes);
    UniqueFd input_fd, output_fds[4];
    const uint32_t input = registerMemfd(client, in_layout, bytes, input_fd);
    // An output per frame: frames writing one buffer would run one after the other
    // (docs/protocol.md, "Fences"), and frame 1 would not wait on the GPU.
    uint32_t outputs[4];
    for (int i = 0; i < 4; ++i)
        outputs[i] = registerMemfd(client, out_layout, bytes, output_fds[i]);
    SharedMapping in(input_fd.get(), bytes), out(output_fds[0].get(), bytes);
    for (uint64_t i = 0; i < bytes; ++i)
        in.bytes()[i] = uint8_t(i * 7 + 3);

    // Frame 0 stays on the GPU behind the gate and frame 1, far shorter than the lead
    // the GPU is fed by, waits behind it there (two in flight allowed), so frames 2 and
    // 3 are held (backpressure block).
    cl_int err = CL_SUCCESS;
    cl::UserEvent gate(daemon.gpu().context(), &err);
    REQUIRE(err == CL_SUCCESS);
    // Opened on the way out too, should a check fail first: the daemon waits for what
    // is on the GPU before it goes.
    const OpenedAtExit opened_at_exit{gate};
    FaultyEnqueue::gate = gate();
    for (uint64_t sequence = 0; sequence < 4; ++sequence)
        REQUIRE(framecl_submit(client, session, input, outputs[sequence], sequence) == 0);
    const auto waiting = [&] { return stats(client)["clients"][0]["frames_waiting"].get<int>(); };
    for (int tries = 0; waiting() < 2 && tries < 500; ++tries)
        std::this_thread::sleep_for(10ms);
    REQUIRE(waiting() == 2);

    // Frames 0 and 1 end well; the others fail as they start, and each end lets a held
    // one in.
    FaultyEnqueue::failing = true;
    REQUIRE(gate.setStatus(CL_COMPLETE) == CL_SUCCESS);
    for (uint64_t sequence = 0; sequence < 4; ++sequence) {
        const framecl_done done = nextDone(client, 5000);
        CHECK(done.sequence == sequence);
        if (sequence < 2) {
            CHECK(done.status == FRAMECL_FRAME_OK);
            continue;
        }
        CHECK(done.status == FRAMECL_FRAME_FAILED);
        CHECK(contains(done.error, "clEnqueueCommandBufferKHR"));
        CHECK(contains(done.error, "CL_OUT_OF_RESOURCES"));
    }

    // The fault gone, the same session runs frames again: copy gives back the input.
    FaultyEnqueue::failing = false;
    std::memset(out.bytes(), 0, bytes);
    REQUIRE(framecl_submit(client, session, input, outputs[0], 4) == 0);
    const framecl_done done = nextDone(client, 5000);
    CHECK(done.sequence == 4);
    CHECK(done.status == FRAMECL_FRAME_OK);
    CHECK(std::memcmp(in.bytes(), out.bytes(), bytes) == 0);

    const auto after = stats(client);
    const auto& counters = after["clients"][0]["sessions"][0];
    CHECK(counters["frames_done"] == 3);
    CHECK(counters["frames_failed"] == 2);
    CHECK(counters["frames_in_flight"] == 0);
    CHECK(after["clients"][0]["frames_waiting"] == 0);
}

TEST_CASE("frames go on the GPU behind a running one while the work ahead is predicted within the lead")
{
    // The GPU is fed while what is on it is predicted to end within 0.5 ms (a quarter of
    // gpu.kernel_budget_ms if less). budget 8 ms: a 64x48 copy is predicted far under
    // that, so the second frame joins the gated first one on the GPU's queue. budget
    // 1 µs: the lead is 250 ns, under any part's prediction, so the second frame waits
    // in the daemon until the first is seen to end.
    struct Case {
        std::string budget;
        bool on_gpu;
    };
    for (const Case& test : {Case{"8.0", true}, Case{"0.001", false}}) {
        CAPTURE(test.budget);
        InProcessDaemon daemon("[gpu]\nkernel_budget_ms = " + test.budget + "\n", openPoclWithFaults);
        Client client = connectAs(daemon, "pipelined");
        constexpr uint32_t width = 64, height = 48;
        framecl_frame_layout out_layout{};
        const uint32_t session = openCopy(client, width, height, &out_layout);
        uint64_t bytes = 0;
        const auto in_layout = packed(DRM_FORMAT_ABGR8888, width, height, &bytes);
        UniqueFd input_fd, first_fd, second_fd;
        const uint32_t input = registerMemfd(client, in_layout, bytes, input_fd);
        const uint32_t first = registerMemfd(client, out_layout, bytes, first_fd);
        const uint32_t second = registerMemfd(client, out_layout, bytes, second_fd);
        SharedMapping in(input_fd.get(), bytes), out(second_fd.get(), bytes);
        for (uint64_t i = 0; i < bytes; ++i)
            in.bytes()[i] = uint8_t(i * 5 + 1);

        // A first frame, so that the session's cost is known.
        REQUIRE(framecl_submit(client, session, input, first, 0) == 0);
        REQUIRE(nextDone(client, 5000).status == FRAMECL_FRAME_OK);

        cl_int err = CL_SUCCESS;
        cl::UserEvent gate(daemon.gpu().context(), &err);
        REQUIRE(err == CL_SUCCESS);
        const OpenedAtExit opened_at_exit{gate};
        FaultyEnqueue::gate = gate();
        REQUIRE(framecl_submit(client, session, input, first, 1) == 0);
        // The stats of the client named "pipelined", once `ready` holds of them (the
        // Submits and the stats request travel on different sockets).
        const auto statsOnce = [&](auto ready) {
            nlohmann::json seen;
            for (int tries = 0; tries < 500; ++tries) {
                const auto now = stats(client);
                for (const auto& other : now["clients"])
                    if (other["name"] == "pipelined")
                        seen = other;
                if (ready(seen))
                    break;
                std::this_thread::sleep_for(10ms);
            }
            return seen;
        };
        REQUIRE(statsOnce([](const nlohmann::json& seen) { return seen["sessions"][0]["frames_in_flight"] == 1; })
                    ["sessions"][0]["frames_in_flight"] == 1);
        REQUIRE(framecl_submit(client, session, input, second, 2) == 0);
        const auto seen =
            statsOnce([](const nlohmann::json& seen) { return seen["sessions"][0]["frames_in_flight"] == 2; });
        REQUIRE(seen["sessions"][0]["frames_in_flight"] == 2);
        CHECK(seen["frames_waiting"] == (test.on_gpu ? 0 : 1));

        REQUIRE(gate.setStatus(CL_COMPLETE) == CL_SUCCESS);
        for (uint64_t sequence = 1; sequence <= 2; ++sequence) {
            const framecl_done done = nextDone(client, 5000);
            CHECK(done.sequence == sequence);
            CHECK(done.status == FRAMECL_FRAME_OK);
        }
        CHECK(std::memcmp(in.bytes(), out.bytes(), bytes) == 0);
    }
}
