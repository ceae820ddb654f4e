#pragma once
// `framecld --list-devices`: what each device offers and what framecld would do with
// it, as text for people and as JSON for scripts.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "gpu/capabilities.hpp"
#include "gpu/device_selection.hpp"
#include "gpu/hints.hpp"
#include "gpu/timestamps.hpp"

namespace framecl::gpu {

struct DeviceReport {
    DeviceCandidate candidate;
    Capabilities capabilities;
    HintPlan hints;      // what chooseHints gives under the configured `gpu` section
    ClockChoice clock;   // what GPU work would be timed with (gpu/timestamps.hpp)
    bool chosen = false; // the device `gpu.device` selects
};

// Every device of every platform, with capabilities read and the configured choice
// marked (none marked when `gpu.device` matches nothing).
std::vector<DeviceReport> collectDeviceReports(const config::GpuConfig& config);

// Per device a heading line, then aligned "key: value" lines.
std::string describeDevicesText(const std::vector<DeviceReport>& reports);

// {"devices": [{...}, ...]}, extensions as an array.
nlohmann::json describeDevicesJson(const std::vector<DeviceReport>& reports);

} // namespace framecl::gpu
