// Client classes with a gpu_priority (docs/configuration.md), on the Qualcomm emulation:
// where the device offers cl_khr_priority_hints, a class's sessions run on a queue of
// that priority, apart from the daemon's lanes; where it does not, on the daemon's
// lanes. The daemon's lanes are held by a barrier on a user event that the test
// enqueues, so a frame there cannot end until the test lets it.
#include <doctest/doctest.h>

#include <cstring>
#include <optional>

#include "in_process_clients.hpp"
#include "qcom_emulation.hpp"

using namespace framecl;
using namespace framecl::test;

namespace {

// A budget far over a 64x48 copy, no tuning; the class "preview" at high priority.
const std::string config_with_classes = "[gpu]\n"
                                        "kernel_budget_ms = 100.0\n"
                                        "tuning = \"off\"\n"
                                        "[[client_class]]\n"
                                        "name = \"preview\"\n"
                                        "match_name = \"preview\"\n"
                                        "gpu_priority = \"high\"\n";

// Every command enqueued on the daemon's lanes after this waits until open() (or the end
// of the scope, so that the daemon can drain if a check fails first).
class HeldLanes {
public:
    explicit HeldLanes(const gpu::GpuContext& gpu) : gate_(gpu.context())
    {
        const cl_event gate = gate_();
        for (uint32_t lane = 0; lane < gpu.defaultLanes(); ++lane) {
            REQUIRE(clEnqueueBarrierWithWaitList(gpu.lane(lane)(), 1, &gate, nullptr) == CL_SUCCESS);
            REQUIRE(clFlush(gpu.lane(lane)()) == CL_SUCCESS);
        }
    }
    ~HeldLanes() { open(); }
    void open()
    {
        if (!opened_)
            REQUIRE(gate_.setStatus(CL_COMPLETE) == CL_SUCCESS);
        opened_ = true;
    }

private:
    cl::UserEvent gate_;
    bool opened_ = false;
};

// A client named `name` with a `copy` session on 64x48 ABGR8888 frames, an input of
// known bytes and an output.
struct CopyStream {
    static constexpr uint32_t width = 64, height = 48;
    Client client;
    uint32_t session = 0, input = 0, output = 0;
    uint64_t bytes = 0;
    UniqueFd input_fd, output_fd;
    std::optional<SharedMapping> in, out;

    CopyStream(const InProcessDaemon& daemon, const char* name, uint8_t seed) : client(connectAs(daemon, name))
    {
        framecl_frame_layout out_layout{};
        session = openCopy(client, width, height, &out_layout);
        const auto in_layout = packed(DRM_FORMAT_ABGR8888, width, height, &bytes);
        input = registerMemfd(client, in_layout, bytes, input_fd);
        output = registerMemfd(client, out_layout, bytes, output_fd);
        in.emplace(input_fd.get(), bytes);
        out.emplace(output_fd.get(), bytes);
        for (uint64_t i = 0; i < bytes; ++i)
            in->bytes()[i] = uint8_t(i * 11 + seed);
    }
    void submit(uint64_t sequence) const { REQUIRE(framecl_submit(client, session, input, output, sequence) == 0); }
    bool copied() const { return std::memcmp(in->bytes(), out->bytes(), bytes) == 0; }
};

} // namespace

TEST_CASE("a class with a higher gpu_priority runs on a queue of that priority, past frames held on the daemon's lanes")
{
    QcomEmulation emulation;
    emulation.offerKhrPriorityHints();
    InProcessDaemon daemon(config_with_classes,
                           [&](const config::GpuConfig& config) { return emulation.openGpu(1 << 20, config); });
    const gpu::GpuContext& gpu = daemon.gpu();

    // The context carries the daemon's priority (CL_CONTEXT_PRIORITY_HINT_QCOM), so its
    // lanes sit at the khr default, normal; a lane at each other level is opened.
    REQUIRE(gpu.priorityLane(config::PriorityHint::High).has_value());
    REQUIRE(gpu.priorityLane(config::PriorityHint::Low).has_value());
    CHECK_FALSE(gpu.priorityLane(config::PriorityHint::Normal).has_value());
    const cl_command_queue high = gpu.lane(*gpu.priorityLane(config::PriorityHint::High))();
    const std::vector<QueuePriority> priorities = emulation.log().queue_priorities;
    REQUIRE(priorities.size() == 2);
    CHECK(priorities[0].queue == high);
    CHECK(priorities[0].priority == CL_QUEUE_PRIORITY_HIGH_KHR);
    CHECK(priorities[1].priority == CL_QUEUE_PRIORITY_LOW_KHR);
    CHECK(gpu.laneRank(*gpu.priorityLane(config::PriorityHint::High)) < gpu.laneRank(0));

    CopyStream bulk(daemon, "bulk", 3), preview(daemon, "preview", 5);
    HeldLanes held(gpu);
    bulk.submit(0);
    preview.submit(0);
    // The preview's frame ends while the bulk client's cannot.
    const framecl_done done = nextDone(preview.client, 5000);
    CHECK(done.status == FRAMECL_FRAME_OK);
    CHECK(preview.copied());
    framecl_done none{};
    CHECK(framecl_next_done(bulk.client, 0, &none) == -EAGAIN);

    held.open();
    CHECK(nextDone(bulk.client, 5000).status == FRAMECL_FRAME_OK);
    CHECK(bulk.copied());

    // Both sessions replay a qcom recording: the preview's on the high lane, made for it.
    size_t on_high = 0;
    for (const RecordingEnqueue& enqueue : emulation.log().recording_enqueues)
        on_high += enqueue.live_queue == high;
    CHECK(on_high >= 2); // the session's first run and its frame
    CHECK(emulation.log().argument_errors.empty());
}

TEST_CASE("without per-queue priorities a class's gpu_priority leaves its sessions on the daemon's lanes")
{
    QcomEmulation emulation; // the Qualcomm context hint alone
    InProcessDaemon daemon(config_with_classes,
                           [&](const config::GpuConfig& config) { return emulation.openGpu(1 << 20, config); });
    const gpu::GpuContext& gpu = daemon.gpu();
    CHECK(gpu.lanes() == gpu.defaultLanes());
    CHECK_FALSE(gpu.priorityLane(config::PriorityHint::High).has_value());
    CHECK(emulation.log().queue_priorities.empty());

    CopyStream preview(daemon, "preview", 7);
    HeldLanes held(gpu);
    preview.submit(0);
    framecl_done done{};
    CHECK(framecl_next_done(preview.client, 300, &done) == -ETIMEDOUT);
    held.open();
    CHECK(nextDone(preview.client, 5000).status == FRAMECL_FRAME_OK);
    CHECK(preview.copied());
}
