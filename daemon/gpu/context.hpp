#pragma once
// The opened device: context, its in-order profiling queues (lanes), its capabilities
// and the vendor entry-point table every later GPU call goes through.

#include <memory>
#include <optional>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"
#include "gpu/capabilities.hpp"
#include <CL/opencl.hpp>
#include "gpu/device_selection.hpp"
#include "gpu/hints.hpp"
#include "gpu/timestamps.hpp"
#include "gpu/vendor_entry_points.hpp"

namespace framecl::gpu {

class GpuContext {
public:
    // A lane at a priority of its own, for a client class (config::ClientClass::gpu_priority).
    struct PriorityLane {
        config::PriorityHint level;
        cl::CommandQueue queue;
    };
    GpuContext(DeviceCandidate candidate, Capabilities caps, VendorEntryPoints vendor, HintPlan hints,
               cl::Context context, std::vector<cl::CommandQueue> lanes, std::vector<PriorityLane> priority_lanes,
               ClockChoice clock);

    const DeviceCandidate& candidate() const { return candidate_; }
    cl_device_id device() const { return candidate_.device; }
    const Capabilities& capabilities() const { return caps_; }
    // The only way the GPU layer reaches extension functions.
    const VendorEntryPoints& vendor() const { return vendor_; }
    const HintPlan& hintPlan() const { return hints_; }
    // The clock GPU work is timed with (gpu/timestamps.hpp), chosen when it opened.
    const ClockChoice& clock() const { return clock_; }
    // `event`'s profiled start and end on the device clock, where the device's
    // timestamps are used and the event carries them (an event of a
    // cl_khr_command_buffer enqueue may not, on PoCL); none otherwise, so that a caller
    // falls back to the host's clock.
    std::optional<ProfiledSpan> profiledSpan(const cl::Event& event) const;
    const cl::Context& context() const { return context_; }
    // Lane 0: where recordings are made and replayed, and calibration and tuning run.
    const cl::CommandQueue& queue() const { return lanes_.front(); }
    // In-order queues of the same device and properties. The tiles of one dispatch are
    // independent, so a session replaying without a recording alternates them between
    // lanes: one tile's slowest work groups then share the device with the next tile's
    // first, where one queue would leave the device idle until the last work group of
    // a tile ends (docs/architecture.md, "Lanes"). The runtime decides whether two lanes
    // run at once; NVIDIA's does (docs/benchmarks.md, "Fairness: a light client beside a
    // heavy one", why lanes).
    // Lanes 0 to defaultLanes() - 1 are the daemon's, at its own priority; the lanes
    // after them each have a priority of their own (priorityLane).
    const cl::CommandQueue& lane(uint32_t index) const { return lanes_.at(index); }
    uint32_t lanes() const { return uint32_t(lanes_.size()); }
    uint32_t defaultLanes() const { return default_lanes_; }
    // Where the device takes a priority per queue (cl_khr_priority_hints), a lane at
    // each level other than the daemon's lanes': the one at `level`. None where `level`
    // is the daemon's lanes' or the device has one level only. On a device that runs a
    // higher-priority queue's commands first, a client class on such a lane does not
    // wait behind the work queued on the daemon's lanes (docs/architecture.md,
    // "Priority lanes").
    std::optional<uint32_t> priorityLane(config::PriorityHint level) const;
    // The priority rank of `lane`'s work: 0 runs first. Lanes of one level share a rank;
    // on a device with one level every lane has rank 0.
    uint32_t laneRank(uint32_t lane) const;
    // clFinish on every lane: CL_SUCCESS, or the first error.
    cl_int finishAll() const;

private:
    DeviceCandidate candidate_;
    Capabilities caps_;
    VendorEntryPoints vendor_;
    HintPlan hints_;
    cl::Context context_;
    std::vector<cl::CommandQueue> lanes_; // at least one: the daemon's, then the priority lanes
    uint32_t default_lanes_;
    std::vector<config::PriorityHint> priority_levels_; // of lanes_[default_lanes_] onwards
    ClockChoice clock_;
};

// The rank of work at `level` among levels: high 0, normal 1, low 2.
uint32_t priorityRank(config::PriorityHint level);


// Enumerates the devices, picks one by `config.device`, reads its capabilities and
// opens it, with `config.lanes` lanes. `vendor` replaces the table resolved from the driver (tests inject an
// emulation). Logs the device and the hint line once at info level.
Result<std::unique_ptr<GpuContext>> openGpu(const config::GpuConfig& config,
                                            std::optional<VendorEntryPoints> vendor = std::nullopt);

// Opens a device already chosen, with capabilities and vendor table given: the
// injection point for tests and for tools that describe a device they built by hand.
Result<std::unique_ptr<GpuContext>> openGpu(const DeviceCandidate& candidate, Capabilities caps,
                                            VendorEntryPoints vendor, const config::GpuConfig& config);

} // namespace framecl::gpu
