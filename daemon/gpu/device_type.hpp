#pragma once
// The kind of an OpenCL device, as device choice and reports use it.

#include <CL/cl.h>

namespace framecl::gpu {

enum class DeviceType { Gpu, Cpu, Accelerator, Other };

// CL_DEVICE_TYPE may combine bits (e.g. with CL_DEVICE_TYPE_DEFAULT); GPU wins.
inline DeviceType deviceTypeFromCl(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return DeviceType::Gpu;
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return DeviceType::Accelerator;
    if (type & CL_DEVICE_TYPE_CPU)
        return DeviceType::Cpu;
    return DeviceType::Other;
}

inline const char* deviceTypeName(DeviceType type)
{
    switch (type) {
    case DeviceType::Gpu:
        return "gpu";
    case DeviceType::Cpu:
        return "cpu";
    case DeviceType::Accelerator:
        return "accelerator";
    case DeviceType::Other:
        break;
    }
    return "other";
}

} // namespace framecl::gpu
