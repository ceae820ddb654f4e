#pragma once
// The Qualcomm (Adreno) extension ABI that Debian's CL/cl_ext.h lacks, with the values
// of /work/shared/reference/qcom-extensions.md (guide §9.1). cl_qcom_ext_host_ptr and
// cl_qcom_ion_host_ptr already come from cl_ext.h.
//
// Constants are guarded one by one, so a newer cl_ext.h that declares them wins. Types
// and function typedefs cannot be tested for, so they are guarded by the extension's
// name macro, which the Khronos headers define beside every extension they declare.

#include <CL/cl.h>
#include <CL/cl_ext.h>

// ---- cl_qcom_perf_hint (guide §4.5.5, §9.1.1) ----
#ifndef CL_CONTEXT_PERF_HINT_QCOM
#define CL_CONTEXT_PERF_HINT_QCOM 0x40C2
#endif
#ifndef CL_PERF_HINT_HIGH_QCOM
#define CL_PERF_HINT_HIGH_QCOM 0x40C3
#endif
#ifndef CL_PERF_HINT_NORMAL_QCOM
#define CL_PERF_HINT_NORMAL_QCOM 0x40C4
#endif
#ifndef CL_PERF_HINT_LOW_QCOM
#define CL_PERF_HINT_LOW_QCOM 0x40C5
#endif
#ifndef cl_qcom_perf_hint
typedef cl_int(CL_API_CALL* clSetPerfHintQCOM_fn)(cl_context context, cl_uint perf_hint);
#endif

// ---- cl_qcom_priority_hint (guide §9.1.2) ----
#ifndef CL_CONTEXT_PRIORITY_HINT_QCOM
#define CL_CONTEXT_PRIORITY_HINT_QCOM 0x40C9
#endif
#ifndef CL_PRIORITY_HINT_HIGH_QCOM
#define CL_PRIORITY_HINT_HIGH_QCOM 0x40CA
#endif
#ifndef CL_PRIORITY_HINT_NORMAL_QCOM
#define CL_PRIORITY_HINT_NORMAL_QCOM 0x40CB
#endif
#ifndef CL_PRIORITY_HINT_LOW_QCOM
#define CL_PRIORITY_HINT_LOW_QCOM 0x40CC
#endif

// ---- cl_qcom_recordable_queues (guide §9.1.3) ----
#ifndef CL_QUEUE_RECORDABLE_QCOM
#define CL_QUEUE_RECORDABLE_QCOM (1u << 30)
#endif
#ifndef CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE
#define CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE 0x41DE
#endif
#ifndef cl_qcom_recordable_queues
typedef struct _cl_recording_qcom* cl_recording_qcom;

// Replaces argument `arg_index` of the `dispatch_index`-th recorded NDRange.
typedef struct _cl_array_arg_qcom {
    cl_uint dispatch_index;
    cl_uint arg_index;
    size_t arg_size;
    const void* arg_value;
} cl_array_arg_qcom;

typedef struct _cl_offset_qcom {
    cl_uint dispatch_index;
    size_t offsets[3];
} cl_offset_qcom;

// Used for both the global and the local size of a recorded dispatch.
typedef struct _cl_workgroup_qcom {
    cl_uint dispatch_index;
    const size_t* workgroup_size;
} cl_workgroup_qcom;

typedef cl_recording_qcom(CL_API_CALL* clNewRecordingQCOM_fn)(cl_command_queue recordable_queue,
                                                              cl_int* errcode_ret);
typedef cl_int(CL_API_CALL* clEndRecordingQCOM_fn)(cl_recording_qcom recording);
typedef cl_int(CL_API_CALL* clReleaseRecordingQCOM_fn)(cl_recording_qcom recording);
typedef cl_int(CL_API_CALL* clRetainRecordingQCOM_fn)(cl_recording_qcom recording);
typedef cl_int(CL_API_CALL* clEnqueueRecordingQCOM_fn)(
    cl_command_queue live_in_order_queue, cl_recording_qcom recording,
    size_t num_args, const cl_array_arg_qcom* arg_array,
    size_t num_global_offsets, const cl_offset_qcom* global_offset_array,
    size_t num_global_workgroups, const cl_workgroup_qcom* global_workgroup_array,
    size_t num_local_workgroups, const cl_workgroup_qcom* local_workgroup_array,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event);
#endif

// ---- cl_qcom_onchip_global_memory (guide §9.1.6) ----
// Buffer properties for clCreateBufferWithProperties; the caller places buffers itself.
#ifndef CL_MEM_ONCHIP_GLOBAL_QCOM
#define CL_MEM_ONCHIP_GLOBAL_QCOM 0x41A2
#endif
#ifndef CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM
#define CL_MEM_ONCHIP_GLOBAL_OFFSET_QCOM 0x41A3
#endif
#ifndef CL_DEVICE_ONCHIP_GLOBAL_MEM_SIZE_QCOM
#define CL_DEVICE_ONCHIP_GLOBAL_MEM_SIZE_QCOM 0x41A4
#endif

// ---- cl_qcom_dmabuf_host_ptr (guide §7.4) ----
// Needs CL_MEM_USE_HOST_PTR | CL_MEM_EXT_HOST_PTR_QCOM, or the driver answers
// CL_INVALID_VALUE.
#ifndef CL_MEM_DMABUF_HOST_PTR_QCOM
#define CL_MEM_DMABUF_HOST_PTR_QCOM 0x411D
#endif
#ifndef CL_MEM_DMABUF_HOST_PTR_PROTECTED_QCOM
#define CL_MEM_DMABUF_HOST_PTR_PROTECTED_QCOM 0x411E
#endif
#ifndef cl_qcom_dmabuf_host_ptr
typedef struct _cl_mem_dmabuf_host_ptr {
    cl_mem_ext_host_ptr ext_host_ptr; // allocation_type = CL_MEM_DMABUF_HOST_PTR_QCOM
    int dmabuf_filedesc;
    void* dmabuf_hostptr; // the client buffer's mmap
} cl_mem_dmabuf_host_ptr;
#endif
