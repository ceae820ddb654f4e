// cl_khr_external_semaphore_sync_fd emulated on PoCL, in the guest: LD_PRELOADed into
// framecld by fence_test.cpp, as a driver that exports its semaphores as sync_files
// would behave (tests/vm/README.md). The device's extensions gain cl_khr_semaphore,
// cl_khr_external_semaphore and cl_khr_external_semaphore_sync_fd, with sync_fd as the
// one export handle type; a semaphore is a vgem buffer with an unsignalled write fence
// (DRM_IOCTL_VGEM_FENCE_ATTACH), exported as the sync_file of its writers
// (DMA_BUF_IOCTL_EXPORT_SYNC_FILE), and its signal a marker on the queue whose
// completion callback signals the vgem fence. Everything else goes to the real OpenCL.
#include <atomic>
#include <cstring>
#include <string>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xf86drm.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>

namespace {

struct VgemFenceAttach {
    uint32_t handle, flags, out_fence, pad;
};
struct VgemFenceSignal {
    uint32_t fence, flags;
};
constexpr unsigned long vgem_fence_attach = DRM_IOWR(DRM_COMMAND_BASE + 0x1, VgemFenceAttach);
constexpr unsigned long vgem_fence_signal = DRM_IOW(DRM_COMMAND_BASE + 0x2, VgemFenceSignal);

constexpr const char* added_extensions = " cl_khr_semaphore cl_khr_external_semaphore cl_khr_external_semaphore_sync_fd";

// One emulated semaphore; freed when released and its signal has run.
struct Semaphore {
    int vgem = -1;
    int dmabuf = -1;
    uint32_t fence = 0;
    std::atomic<int> references{1};
};

void unref(Semaphore* semaphore)
{
    if (--semaphore->references > 0)
        return;
    close(semaphore->dmabuf);
    close(semaphore->vgem); // signals the fence, were it still pending
    delete semaphore;
}

template <typename Function> Function next(const char* name)
{
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

cl_semaphore_khr CL_API_CALL createSemaphore(cl_context, const cl_semaphore_properties_khr* properties, cl_int* err)
{
    bool sync_fd = false;
    for (const cl_semaphore_properties_khr* p = properties; p && *p; p += 2) {
        if (*p != CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR)
            continue;
        for (++p; *p != CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR; ++p)
            sync_fd = sync_fd || *p == CL_SEMAPHORE_HANDLE_SYNC_FD_KHR;
        --p; // the loop steps over the list's end with the pair
    }
    auto* semaphore = new Semaphore;
    drm_mode_create_dumb dumb{};
    dumb.width = 64;
    dumb.height = 1;
    dumb.bpp = 8;
    semaphore->vgem = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
    VgemFenceAttach attach{};
    if (!sync_fd || semaphore->vgem < 0 || ioctl(semaphore->vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) != 0 ||
        drmPrimeHandleToFD(semaphore->vgem, dumb.handle, DRM_CLOEXEC | DRM_RDWR, &semaphore->dmabuf) != 0 ||
        (attach = {dumb.handle, 1, 0, 0}, ioctl(semaphore->vgem, vgem_fence_attach, &attach)) != 0) {
        unref(semaphore);
        *err = CL_INVALID_VALUE;
        return nullptr;
    }
    semaphore->fence = attach.out_fence;
    *err = CL_SUCCESS;
    return reinterpret_cast<cl_semaphore_khr>(semaphore);
}

void CL_CALLBACK signalled(cl_event, cl_int, void* data)
{
    auto* semaphore = static_cast<Semaphore*>(data);
    VgemFenceSignal request{semaphore->fence, 0};
    ioctl(semaphore->vgem, vgem_fence_signal, &request);
    unref(semaphore);
}

cl_int CL_API_CALL enqueueSignal(cl_command_queue queue, cl_uint count, const cl_semaphore_khr* semaphores,
                                 const cl_semaphore_payload_khr*, cl_uint waits, const cl_event* wait_list,
                                 cl_event* event)
{
    if (count != 1)
        return CL_INVALID_VALUE;
    auto* semaphore = reinterpret_cast<Semaphore*>(semaphores[0]);
    cl_event marker = nullptr;
    cl_int err = clEnqueueMarkerWithWaitList(queue, waits, wait_list, &marker);
    if (err != CL_SUCCESS)
        return err;
    ++semaphore->references;
    clSetEventCallback(marker, CL_COMPLETE, signalled, semaphore);
    clFlush(queue);
    if (event)
        *event = marker;
    else
        clReleaseEvent(marker);
    return CL_SUCCESS;
}

cl_int CL_API_CALL getHandle(cl_semaphore_khr handle, cl_device_id, cl_external_semaphore_handle_type_khr type,
                             size_t size, void* value, size_t* size_ret)
{
    if (type != CL_SEMAPHORE_HANDLE_SYNC_FD_KHR)
        return CL_INVALID_VALUE;
    if (size_ret)
        *size_ret = sizeof(int);
    if (!value)
        return CL_SUCCESS;
    if (size < sizeof(int))
        return CL_INVALID_VALUE;
    dma_buf_export_sync_file request{DMA_BUF_SYNC_READ, -1};
    if (ioctl(reinterpret_cast<Semaphore*>(handle)->dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &request) != 0)
        return CL_OUT_OF_RESOURCES;
    std::memcpy(value, &request.fd, sizeof(int));
    return CL_SUCCESS;
}

cl_int CL_API_CALL releaseSemaphore(cl_semaphore_khr handle)
{
    unref(reinterpret_cast<Semaphore*>(handle));
    return CL_SUCCESS;
}

} // namespace

extern "C" {

CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char* name)
{
    const std::string wanted(name);
    if (wanted == "clCreateSemaphoreWithPropertiesKHR")
        return reinterpret_cast<void*>(&createSemaphore);
    if (wanted == "clEnqueueSignalSemaphoresKHR")
        return reinterpret_cast<void*>(&enqueueSignal);
    if (wanted == "clGetSemaphoreHandleForTypeKHR")
        return reinterpret_cast<void*>(&getHandle);
    if (wanted == "clReleaseSemaphoreKHR")
        return reinterpret_cast<void*>(&releaseSemaphore);
    static const auto real = next<decltype(&clGetExtensionFunctionAddressForPlatform)>(
        "clGetExtensionFunctionAddressForPlatform");
    return real(platform, name);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void* value,
                                                size_t* size_ret)
{
    static const auto real = next<decltype(&clGetDeviceInfo)>("clGetDeviceInfo");
    if (param == CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR) {
        const cl_external_semaphore_handle_type_khr types[] = {CL_SEMAPHORE_HANDLE_SYNC_FD_KHR};
        if (size_ret)
            *size_ret = sizeof types;
        if (value && size < sizeof types)
            return CL_INVALID_VALUE;
        if (value)
            std::memcpy(value, types, sizeof types);
        return CL_SUCCESS;
    }
    if (param != CL_DEVICE_EXTENSIONS)
        return real(device, param, size, value, size_ret);
    size_t length = 0;
    cl_int err = real(device, param, 0, nullptr, &length);
    if (err != CL_SUCCESS)
        return err;
    std::string extensions(length, '\0');
    if ((err = real(device, param, length, extensions.data(), nullptr)) != CL_SUCCESS)
        return err;
    extensions.resize(std::strlen(extensions.c_str()));
    extensions += added_extensions;
    if (size_ret)
        *size_ret = extensions.size() + 1;
    if (value && size < extensions.size() + 1)
        return CL_INVALID_VALUE;
    if (value)
        std::memcpy(value, extensions.c_str(), extensions.size() + 1);
    return CL_SUCCESS;
}

} // extern "C"
