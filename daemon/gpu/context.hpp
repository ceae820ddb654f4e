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
#include "gpu/vendor_entry_points.hpp"

namespace framecl::gpu {

class GpuContext {
public:
    GpuContext(DeviceCandidate candidate, Capabilities caps, VendorEntryPoints vendor, HintPlan hints,
               cl::Context context, std::vector<cl::CommandQueue> lanes);

    const DeviceCandidate& candidate() const { return candidate_; }
    cl_device_id device() const { return candidate_.device; }
    const Capabilities& capabilities() const { return caps_; }
    // The only way the GPU layer reaches extension functions.
    const VendorEntryPoints& vendor() const { return vendor_; }
    const HintPlan& hintPlan() const { return hints_; }
    const cl::Context& context() const { return context_; }
    // Lane 0: where recordings are made and replayed, and calibration and tuning run.
    const cl::CommandQueue& queue() const { return lanes_.front(); }
    // In-order queues of the same device and properties. The tiles of one dispatch are
    // independent, so a session replaying without a recording alternates them between
    // lanes: one tile's slowest work groups then share the device with the next tile's
    // first, where one queue would leave the device idle until the last work group of
    // a tile ends (docs/architecture.md, "Lanes"). The runtime decides whether two lanes
    // run at once; NVIDIA's does, and the H100 measured a divergent mean shift in 7 tiles
    // as fast as one dispatch on two lanes, 17% slower on one (docs/benchmarks.md).
    const cl::CommandQueue& lane(uint32_t index) const { return lanes_.at(index); }
    uint32_t lanes() const { return uint32_t(lanes_.size()); }
    // clFinish on every lane: CL_SUCCESS, or the first error.
    cl_int finishAll() const;

private:
    DeviceCandidate candidate_;
    Capabilities caps_;
    VendorEntryPoints vendor_;
    HintPlan hints_;
    cl::Context context_;
    std::vector<cl::CommandQueue> lanes_; // at least one
};


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
