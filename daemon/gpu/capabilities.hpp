#pragma once
// What one OpenCL device offers, read once when the device is opened. A plain
// aggregate: tests build one by hand to stand for a device they do not have.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CL/cl.h>

#include "gpu/device_type.hpp"

namespace framecl::gpu {

struct Capabilities {
    std::string name;
    std::string vendor;
    std::string driver_version;
    std::string opencl_version; // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 Adreno(TM) 740"
    DeviceType type = DeviceType::Other;

    bool fp16 = false;   // cl_khr_fp16
    bool images = false; // CL_DEVICE_IMAGE_SUPPORT
    uint32_t image_pitch_alignment = 0; // pixels, for images from buffers; 0: none
    bool unified_memory = false;        // host and device share memory

    bool command_buffer = false;                   // cl_khr_command_buffer
    bool command_buffer_mutable_dispatch = false;  // cl_khr_command_buffer_mutable_dispatch
    bool recordable_queues = false;                // cl_qcom_recordable_queues
    uint64_t recordable_queue_max_size = 0;        // dispatches per recording; 0: unknown
    bool onchip_global_memory = false;             // cl_qcom_onchip_global_memory
    uint64_t onchip_global_memory_size = 0;        // bytes

    bool qcom_perf_hint = false;     // cl_qcom_perf_hint
    bool qcom_priority_hint = false; // cl_qcom_priority_hint
    bool khr_priority_hints = false; // cl_khr_priority_hints

    // dma-buf import paths (guide §7.4), in the order the memory layer tries them.
    bool qcom_dmabuf_host_ptr = false;        // cl_qcom_dmabuf_host_ptr
    bool qcom_ion_host_ptr = false;           // cl_qcom_ion_host_ptr
    bool khr_external_memory_dma_buf = false; // cl_khr_external_memory_dma_buf

    bool subgroups = false; // cl_khr_subgroups, or OpenCL >= 2.1 with sub-groups

    // The driver compiles a kernel for each new work-group size (and global-offset
    // class) at its first launch, holding a lock that every launch in the process takes
    // meanwhile: PoCL's CPU driver (its kernel cache's lock). New kernels are then
    // compiled in a helper process first (pipeline/compile_ahead.hpp).
    bool compiles_at_first_launch = false;

    size_t max_work_group_size = 0;
    uint32_t max_compute_units = 0;
    uint64_t global_mem_size = 0;
    uint64_t global_cache_size = 0;
    uint32_t global_cache_line_size = 0;
    uint64_t local_mem_size = 0;
    uint64_t max_alloc_size = 0;

    std::vector<std::string> extensions;

    bool hasExtension(std::string_view extension) const;
};

// Queries the device. A query the device refuses (a vendor query on another vendor's
// device, a 2.x query on a 1.2 device) leaves its field at zero; it never fails.
Capabilities readCapabilities(cl_device_id device);

} // namespace framecl::gpu
