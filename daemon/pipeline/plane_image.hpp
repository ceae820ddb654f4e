#pragma once
// A plane of a frame as an OpenCL image (plugin.h, the *_IMAGE kinds): its channel
// format and size, and the kernel of kernels/copy.cl that copies such a plane from a
// buffer into one.

#include <cstdint>
#include <optional>

#include <CL/cl.h>

#include <framecl/plugin.h>

namespace framecl::pipeline {

struct PlaneImage {
    cl_image_format format;
    uint32_t width, height;
    uint32_t pixel_bytes;
    const char* copy_kernel;
};

// Plane `plane` of `frame` as an image, or nothing for a format that has no image form
// (ABGR16161616 and the Bayer formats: a plugin reads them from buffers).
std::optional<PlaneImage> planeImage(const framecl_format& frame, uint32_t plane);

} // namespace framecl::pipeline
