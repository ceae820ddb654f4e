#include "pipeline/plane_image.hpp"

namespace framecl::pipeline {

std::optional<PlaneImage> planeImage(const framecl_format& frame, uint32_t plane)
{
    switch (frame.fourcc) {
    case DRM_FORMAT_R8:
        return PlaneImage{{CL_R, CL_UNSIGNED_INT8}, frame.width, frame.height, 1, "copy_plane_to_image_r8"};
    case DRM_FORMAT_R16:
        return PlaneImage{{CL_R, CL_UNSIGNED_INT16}, frame.width, frame.height, 2, "copy_plane_to_image_r16"};
    case DRM_FORMAT_ABGR8888:
        return PlaneImage{{CL_RGBA, CL_UNSIGNED_INT8}, frame.width, frame.height, 4, "copy_plane_to_image_rgba8"};
    case DRM_FORMAT_NV12: // the UV plane's bytes, Cb at even x and Cr at odd: CL_RG is rarer (PoCL lacks it)
        return PlaneImage{{CL_R, CL_UNSIGNED_INT8}, frame.width, plane == 1 ? (frame.height + 1) / 2 : frame.height,
                          1, "copy_plane_to_image_r8"};
    default:
        return std::nullopt;
    }
}

} // namespace framecl::pipeline
