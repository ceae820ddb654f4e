#include "pipeline/host_image.hpp"

#include <drm_fourcc.h>

namespace framecl::pipeline {

uint32_t bytesPerPixel(uint32_t fourcc)
{
    switch (fourcc) {
    case DRM_FORMAT_R8:
        return 1;
    case DRM_FORMAT_ABGR8888:
        return 4;
    default:
        return 0;
    }
}

std::string formatName(uint32_t fourcc)
{
    switch (fourcc) {
    case DRM_FORMAT_R8:
        return "R8";
    case DRM_FORMAT_ABGR8888:
        return "ABGR8888";
    case DRM_FORMAT_NV12:
        return "NV12";
    default:
        return std::string{char(fourcc), char(fourcc >> 8), char(fourcc >> 16), char(fourcc >> 24)};
    }
}

} // namespace framecl::pipeline
