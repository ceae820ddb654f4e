#include "gpu/device_selection.hpp"

#include <algorithm>
#include <cctype>

#include "base/log.hpp"
#include "gpu/cl_error.hpp"
#include "gpu/cl_info.hpp"

namespace framecl::gpu {
namespace {

std::string lowercase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

bool containsIgnoringCase(const std::string& haystack, const std::string& lowered_needle)
{
    return lowercase(haystack).find(lowered_needle) != std::string::npos;
}

std::string listDevices(const std::vector<DeviceCandidate>& candidates)
{
    std::string list;
    for (const auto& candidate : candidates) {
        if (!list.empty())
            list += ", ";
        list += "'" + candidate.name + "' (" + candidate.platform_name + ", " +
                deviceTypeName(candidate.type) + ")";
    }
    return list;
}

DeviceCandidate describe(cl_platform_id platform, const std::string& platform_name, cl_device_id device)
{
    cl_device_type type = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, nullptr) != CL_SUCCESS)
        type = 0;
    return DeviceCandidate{platform, device, deviceInfoString(device, CL_DEVICE_NAME), platform_name,
                           deviceTypeFromCl(type)};
}

} // namespace

Result<size_t> chooseDevice(const std::vector<DeviceCandidate>& candidates, const std::string& wanted)
{
    if (candidates.empty())
        return fail("gpu.device = '" + wanted + "': no OpenCL device found (is an ICD installed?)");

    if (wanted == "auto") {
        for (DeviceType type : {DeviceType::Gpu, DeviceType::Accelerator, DeviceType::Cpu}) {
            auto it = std::find_if(candidates.begin(), candidates.end(),
                                   [type](const DeviceCandidate& c) { return c.type == type; });
            if (it != candidates.end())
                return static_cast<size_t>(it - candidates.begin());
        }
        return size_t{0};
    }

    const std::string needle = lowercase(wanted);
    for (size_t i = 0; i < candidates.size(); ++i) {
        if (containsIgnoringCase(candidates[i].name, needle) ||
            containsIgnoringCase(candidates[i].platform_name, needle))
            return i;
    }
    return fail("gpu.device = '" + wanted + "' matches no OpenCL device; available: " +
                listDevices(candidates));
}

std::vector<DeviceCandidate> enumerateDevices()
{
    auto logger = log::get("gpu");
    std::vector<DeviceCandidate> candidates;

    cl_uint platform_count = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &platform_count);
    if (err != CL_SUCCESS || platform_count == 0) {
        // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no driver is installed.
        logger->warn("no OpenCL platform: {}", clFailure("clGetPlatformIDs", err));
        return candidates;
    }
    std::vector<cl_platform_id> platforms(platform_count);
    err = clGetPlatformIDs(platform_count, platforms.data(), nullptr);
    if (err != CL_SUCCESS) {
        logger->warn("no OpenCL platform: {}", clFailure("clGetPlatformIDs", err));
        return candidates;
    }

    for (cl_platform_id platform : platforms) {
        const std::string name = platformInfoString(platform, CL_PLATFORM_NAME);
        const std::string object = "platform '" + name + "'";
        cl_uint device_count = 0;
        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
        if (err != CL_SUCCESS) {
            logger->warn("skipping platform: {}", clFailure("clGetDeviceIDs", err, object));
            continue;
        }
        std::vector<cl_device_id> devices(device_count);
        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, devices.data(), nullptr);
        if (err != CL_SUCCESS) {
            logger->warn("skipping platform: {}", clFailure("clGetDeviceIDs", err, object));
            continue;
        }
        // Root devices from clGetDeviceIDs are not reference counted: nothing to release.
        for (cl_device_id device : devices)
            candidates.push_back(describe(platform, name, device));
    }
    return candidates;
}

} // namespace framecl::gpu
