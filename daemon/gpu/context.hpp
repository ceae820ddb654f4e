#pragma once
// The opened device: context, the one in-order profiling queue, its capabilities and
// the vendor entry-point table every later GPU call goes through.

#include <memory>
#include <optional>

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
               cl::Context context, cl::CommandQueue queue);

    const DeviceCandidate& candidate() const { return candidate_; }
    cl_device_id device() const { return candidate_.device; }
    const Capabilities& capabilities() const { return caps_; }
    // The only way the GPU layer reaches extension functions.
    const VendorEntryPoints& vendor() const { return vendor_; }
    const HintPlan& hintPlan() const { return hints_; }
    const cl::Context& context() const { return context_; }
    const cl::CommandQueue& queue() const { return queue_; }

private:
    DeviceCandidate candidate_;
    Capabilities caps_;
    VendorEntryPoints vendor_;
    HintPlan hints_;
    cl::Context context_;
    cl::CommandQueue queue_;
};

// Enumerates the devices, picks one by `config.device`, reads its capabilities and
// opens it. `vendor` replaces the table resolved from the driver (tests inject an
// emulation). Logs the device and the hint line once at info level.
Result<std::unique_ptr<GpuContext>> openGpu(const config::GpuConfig& config,
                                            std::optional<VendorEntryPoints> vendor = std::nullopt);

// Opens a device already chosen, with capabilities and vendor table given: the
// injection point for tests and for tools that describe a device they built by hand.
Result<std::unique_ptr<GpuContext>> openGpu(const DeviceCandidate& candidate, Capabilities caps,
                                            VendorEntryPoints vendor, const config::GpuConfig& config);

} // namespace framecl::gpu
