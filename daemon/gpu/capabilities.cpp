#include "gpu/capabilities.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "gpu/cl_info.hpp"
#include "gpu/vendor_extensions.hpp"

namespace framecl::gpu {
namespace {

// Reads an unsigned value whose width depends on the query: cl_uint, cl_bool, size_t,
// cl_ulong, cl_bitfield. Vendor queries whose width is undocumented (the recordable
// queue size) are taken as 4 or 8 bytes, whichever the driver reports.
uint64_t queryUnsigned(cl_device_id device, cl_device_info param)
{
    size_t size = 0;
    if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS)
        return 0;
    if (size == sizeof(uint32_t)) {
        uint32_t value = 0;
        if (clGetDeviceInfo(device, param, size, &value, nullptr) == CL_SUCCESS)
            return value;
    } else if (size == sizeof(uint64_t)) {
        uint64_t value = 0;
        if (clGetDeviceInfo(device, param, size, &value, nullptr) == CL_SUCCESS)
            return value;
    }
    return 0;
}

std::vector<std::string> splitExtensions(const std::string& list)
{
    std::vector<std::string> names;
    std::istringstream stream(list);
    for (std::string name; stream >> name;)
        names.push_back(name);
    return names;
}

// "OpenCL 3.0 PoCL ..." -> 300; 0 when the string does not follow the spec's format.
int openclVersion(const std::string& version)
{
    int major = 0, minor = 0;
    if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2)
        return 0;
    return major * 100 + minor * 10;
}

} // namespace

bool Capabilities::hasExtension(std::string_view extension) const
{
    return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

Capabilities readCapabilities(cl_device_id device)
{
    Capabilities caps;
    caps.name = deviceInfoString(device, CL_DEVICE_NAME);
    caps.vendor = deviceInfoString(device, CL_DEVICE_VENDOR);
    caps.driver_version = deviceInfoString(device, CL_DRIVER_VERSION);
    caps.opencl_version = deviceInfoString(device, CL_DEVICE_VERSION);
    caps.type = deviceTypeFromCl(queryUnsigned(device, CL_DEVICE_TYPE));
    caps.extensions = splitExtensions(deviceInfoString(device, CL_DEVICE_EXTENSIONS));

    caps.fp16 = caps.hasExtension("cl_khr_fp16");
    caps.images = queryUnsigned(device, CL_DEVICE_IMAGE_SUPPORT) != 0;
    if (caps.images)
        caps.image_pitch_alignment = static_cast<uint32_t>(
            queryUnsigned(device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT));

    // CL_DEVICE_HOST_UNIFIED_MEMORY is deprecated since 2.0 but still answered; a
    // fine-grained SVM buffer or a CPU device means the same for zero copy (§7.4).
    const bool host_unified = queryUnsigned(device, CL_DEVICE_HOST_UNIFIED_MEMORY) != 0;
    const bool fine_grain_svm =
        (queryUnsigned(device, CL_DEVICE_SVM_CAPABILITIES) & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
    caps.unified_memory = host_unified || fine_grain_svm || caps.type == DeviceType::Cpu;

    caps.command_buffer = caps.hasExtension("cl_khr_command_buffer");
    caps.command_buffer_mutable_dispatch =
        caps.hasExtension("cl_khr_command_buffer_mutable_dispatch");
    caps.recordable_queues = caps.hasExtension("cl_qcom_recordable_queues");
    if (caps.recordable_queues)
        caps.recordable_queue_max_size =
            queryUnsigned(device, CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE);
    caps.onchip_global_memory = caps.hasExtension("cl_qcom_onchip_global_memory");
    if (caps.onchip_global_memory)
        caps.onchip_global_memory_size =
            queryUnsigned(device, CL_DEVICE_ONCHIP_GLOBAL_MEM_SIZE_QCOM);

    caps.qcom_perf_hint = caps.hasExtension("cl_qcom_perf_hint");
    caps.qcom_priority_hint = caps.hasExtension("cl_qcom_priority_hint");
    caps.khr_priority_hints = caps.hasExtension("cl_khr_priority_hints");

    caps.qcom_dmabuf_host_ptr = caps.hasExtension("cl_qcom_dmabuf_host_ptr");
    caps.qcom_ion_host_ptr = caps.hasExtension("cl_qcom_ion_host_ptr");
    caps.khr_external_memory_dma_buf = caps.hasExtension("cl_khr_external_memory_dma_buf");

    // Sub-groups became core in 2.1 but optional again in 3.0, where a device without
    // them reports CL_DEVICE_MAX_NUM_SUB_GROUPS = 0 (PoCL on CPU does).
    caps.subgroups = caps.hasExtension("cl_khr_subgroups") ||
                     (openclVersion(caps.opencl_version) >= 210 &&
                      queryUnsigned(device, CL_DEVICE_MAX_NUM_SUB_GROUPS) > 0);

    // PoCL names itself in CL_DEVICE_VERSION: "OpenCL 3.0 PoCL 3.1+debian  Linux, ...".
    caps.compiles_at_first_launch = caps.opencl_version.find(" PoCL ") != std::string::npos;

    caps.max_work_group_size = queryUnsigned(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    caps.max_compute_units = static_cast<uint32_t>(queryUnsigned(device, CL_DEVICE_MAX_COMPUTE_UNITS));
    caps.global_mem_size = queryUnsigned(device, CL_DEVICE_GLOBAL_MEM_SIZE);
    caps.global_cache_size = queryUnsigned(device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    caps.global_cache_line_size =
        static_cast<uint32_t>(queryUnsigned(device, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE));
    caps.local_mem_size = queryUnsigned(device, CL_DEVICE_LOCAL_MEM_SIZE);
    caps.max_alloc_size = queryUnsigned(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    return caps;
}

} // namespace framecl::gpu
