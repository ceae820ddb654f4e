// A frame that failed on the GPU, and a GPU that is lost (docs/architecture.md, "A
// failed frame and a lost GPU"). OpenCL has no "device lost" error: a driver that lost
// its context fails the frames in flight with whatever error it chooses
// (CL_OUT_OF_RESOURCES on NVIDIA), as it does a frame that failed alone. What tells the
// two apart is whether the device still runs work afterwards.

#include <fmt/format.h>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "gpu/device_probe.hpp"
#include "scheduler/frame_scheduler.hpp"

namespace framecl::scheduler {

// Long enough for a busy device to reach the probe behind the work queued before it.
constexpr auto probe_timeout = std::chrono::seconds(2);
// The probe waits on the loop, for as long as the device takes to reach it: after one
// that passed, no other for this long, so that a session whose kernel fails on every
// frame does not hold the other clients up at each one. A lost device fails every
// frame, so the first failure after it is probed.
constexpr auto probe_interval = std::chrono::seconds(1);

void FrameScheduler::checkGpuAfterFailure()
{
    gpu_failed_ = false;
    const auto now = std::chrono::steady_clock::now();
    if (!gpu_lost_.empty() || now - gpu_probe_passed_ < probe_interval)
        return;
    const auto probed = gpu::probeDevice(gpu_, probe_timeout);
    if (probed) {
        gpu_probe_passed_ = now;
        log::get("scheduler")->warn("a frame failed on the GPU; the device still runs work, so the next frames go on");
        return;
    }
    gpu_lost_ = fmt::format("the GPU is lost ({}); framecld exits for its service manager to restart it",
                            probed.error().message);
    log::get("scheduler")->critical("{}", gpu_lost_);
    failEveryFrame(gpu_lost_);
    events_.gpu_lost(gpu_lost_);
}

void FrameScheduler::failEveryFrame(const std::string& reason)
{
    // The started frames first: one whose parts are not all enqueued is also at the
    // front of its client's queue, where it is passed over below.
    work_ahead_.clear();
    while (!in_flight_.empty()) {
        auto node = in_flight_.extract(in_flight_.begin());
        node.mapped().failure = reason;
        completeFrame(std::move(node.mapped()), CL_COMPLETE, monotonicNs());
    }
    std::vector<Pending> waiting;
    for (FairQueue<Pending>& queue : fair_queues_)
        queue.extractWaiting([](const Pending&) { return true; }, waiting);
    // A session's opening work has no end to hand over: its preparer stops with the loop.
    for (const Pending& pending : waiting)
        if (!pending.started && !pending.opening_work)
            endWaitingFrame(pending, Outcome::Failed, reason);
}

} // namespace framecl::scheduler
