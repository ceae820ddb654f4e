// The self-test's fairness probe: two sessions of one pipeline through framecld's
// frame scheduler, as two clients of weights 3 and 1 that always have frames waiting
// (docs/architecture.md, "Scheduling"). The GPU time each gets should follow the
// weights; every frame must come out right. The fair queue arbitrates only while frames
// wait for the GPU: on a device that runs them faster than one host thread can feed
// them (an H200), nothing waits, and both clients get what they ask for; the probe then
// says so rather than judging the weights.
#include <poll.h>

#include <fmt/format.h>

#include "base/monotonic_clock.hpp"
#include "gpu/replay.hpp"
#include "scheduler/frame_scheduler.hpp"
#include "selftest/checks.hpp"

namespace framecl::selftest {
namespace {

constexpr const char* scheduling_area = "scheduling";
constexpr pipeline::FrameShape probe_shape{DRM_FORMAT_R8, 320, 240};
constexpr uint32_t weights[2] = {3, 1};
constexpr size_t frames_each = 4; // in flight per client, each resubmitted as it ends
constexpr uint64_t probe_ns = 600'000'000;
// The probe ends once the light client has had this many frames end, after probe_ns.
constexpr size_t least_frames = 6;
// The GPU-time ratio of the two clients that passes, around the weights' 3: loose,
// since a few frames decide it and the host may be busy.
constexpr double least_ratio = 1.5, most_ratio = 6.0;
// The part of the probe's time the GPU must have been busy for its frames to have
// waited, and so for the weights to show.
constexpr double least_busy = 0.75;

struct Slot {
    std::shared_ptr<memory::ImportedBuffer> input, output;
    UniqueFd output_reader;
};

struct Client {
    std::shared_ptr<pipeline::Session> session;
    std::vector<Slot> slots;
    uint64_t gpu_ns = 0;
    size_t ended = 0;
};


std::string probe(const SelfTestDevice& device, std::string& measured)
{
    auto pipeline = findPipeline(device, recording_pipeline);
    if (!pipeline)
        return pipeline.error().message;
    const gpu::RecordingMode recording =
        gpu::chooseRecordingMode(device.gpu.capabilities(), device.gpu.vendor(), device.config.gpu.recording);
    const PackedFrame input = randomFrame(probe_shape, 31);
    Client clients[2];
    for (Client& client : clients) {
        auto session = pipeline::Session::open(device.gpu, *pipeline, probe_shape, sessionOptions(device, recording));
        if (!session)
            return session.error().message;
        client.session = std::move(*session);
        for (size_t s = 0; s < frames_each; ++s) {
            auto in_fd = memfdWith(input, input.size());
            auto out_fd = memfdWith({}, input.size());
            if (!in_fd || !out_fd)
                return (in_fd ? out_fd : in_fd).error().message;
            Slot slot;
            slot.output_reader = UniqueFd(dup(out_fd->get()));
            auto in = importShared(device, std::move(*in_fd), probe_shape);
            auto out = importShared(device, std::move(*out_fd), probe_shape);
            if (!in || !out)
                return (in ? out : in).error().message;
            slot.input = std::move(*in);
            slot.output = std::move(*out);
            client.slots.push_back(std::move(slot));
        }
    }

    std::string failure;
    bool feeding = true;
    uint64_t arrival = 0;
    std::unique_ptr<scheduler::FrameScheduler> frames;
    const auto submit = [&](uint64_t id, uint64_t slot) {
        Client& client = clients[id - 1];
        frames->submit({id, 1, slot, client.session, client.slots[slot].input, client.slots[slot].output,
                        monotonicNs(), ++arrival, 0});
    };
    frames = std::make_unique<scheduler::FrameScheduler>(
        device.gpu, device.config.gpu,
        scheduler::SchedulerEvents{[&](const scheduler::FrameEnd& end) {
                                       Client& client = clients[end.frame.client_id - 1];
                                       if (end.outcome != scheduler::Outcome::Ran && failure.empty())
                                           failure = "a frame did not run: " + end.error;
                                       client.gpu_ns += end.gpu_ns;
                                       ++client.ended;
                                       if (feeding)
                                           submit(end.frame.client_id, end.frame.sequence);
                                   },
                                   [&](const std::string& reason) { failure = "the GPU is lost: " + reason; }});
    for (uint64_t id = 1; id <= 2; ++id) {
        frames->placeClient(id, 0, weights[id - 1]);
        for (uint64_t slot = 0; slot < frames_each; ++slot)
            submit(id, slot);
    }
    const uint64_t started = monotonicNs();
    frames->schedule();
    while (frames->framesLeft() > 0 && failure.empty()) {
        pollfd ready{frames->completionFd(), POLLIN, 0};
        if (poll(&ready, 1, 60'000) != 1)
            return "no frame ended for a minute";
        frames->onCompletions();
        feeding = feeding && (monotonicNs() - started < probe_ns || clients[1].ended < least_frames);
        frames->schedule();
    }
    if (!failure.empty())
        return failure;
    const uint64_t probe_wall_ns = monotonicNs() - started;

    const PackedFrame expected = recordingReference(input, probe_shape);
    for (const Client& client : clients)
        for (const Slot& slot : client.slots) {
            auto got = readShared(slot.output_reader.get(), expected.size());
            if (!got)
                return got.error().message;
            if (auto wrong = differences(*got, expected); !wrong.empty())
                return "a frame came out wrong: " + wrong;
        }
    const double ratio = clients[1].gpu_ns ? double(clients[0].gpu_ns) / double(clients[1].gpu_ns) : 0;
    const double busy = double(clients[0].gpu_ns + clients[1].gpu_ns) / double(probe_wall_ns);
    measured = fmt::format("weights 3 and 1: {} and {} frames of {}, {:.1f} and {:.1f} ms of GPU time (ratio {:.2f}) "
                           "in {:.0f} ms",
                           clients[0].ended, clients[1].ended, pipeline::describe(probe_shape),
                           double(clients[0].gpu_ns) / 1e6, double(clients[1].gpu_ns) / 1e6, ratio,
                           double(probe_wall_ns) / 1e6);
    if (busy < least_busy) {
        measured += fmt::format("; the GPU was busy {:.0f}% of it, so no frame waited for the other client's and "
                                "the weights had nothing to share out",
                                100 * busy);
        return {};
    }
    measured += fmt::format("; the GPU busy {:.0f}% of it, the ratio within {:g} to {:g}", 100 * busy, least_ratio,
                            most_ratio);
    return ratio >= least_ratio && ratio <= most_ratio ? "" : "the GPU time does not follow the weights: " + measured;
}

} // namespace

void probeFairness(const SelfTestDevice& device, std::vector<Check>& checks)
{
    std::string measured;
    const std::string problem = probe(device, measured);
    checks.push_back({scheduling_area, "fair queue", problem.empty() ? Outcome::Passed : Outcome::Failed,
                      problem.empty() ? measured : problem});
}

} // namespace framecl::selftest
