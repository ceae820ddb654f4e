#pragma once
// Which OpenCL device framecld uses (`gpu.device`, docs/configuration.md). The choice
// is a pure function over device descriptions, so it is tested without devices.

#include <cstddef>
#include <string>
#include <vector>

#include <CL/cl.h>

#include "base/result.hpp"
#include "gpu/device_type.hpp"

namespace framecl::gpu {

struct DeviceCandidate {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    std::string name;
    std::string platform_name;
    DeviceType type = DeviceType::Other;
};

// `wanted` = "auto": the first GPU, else the first accelerator, else the first CPU
// (PoCL, the embedded default), else the first device. Any other string: the first
// device whose name or platform name contains it, ignoring case. Returns the index
// into `candidates`; the error lists the devices there are.
Result<size_t> chooseDevice(const std::vector<DeviceCandidate>& candidates, const std::string& wanted);

// Every device of every platform. A platform that cannot list its devices is skipped
// with a log line; no platform at all gives an empty list.
std::vector<DeviceCandidate> enumerateDevices();

} // namespace framecl::gpu
