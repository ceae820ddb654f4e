#pragma once
// Where a layout's pixels are, plane by plane: what a copy of a frame moves, without
// the padding at the end of each row and between planes, which is the client's.

#include <cstdint>

#include "framecl/format.h"

namespace framecl::protocol {

struct PlaneRows {
    uint64_t offset;    // of the plane's first row in the buffer
    uint64_t stride;    // from one row to the next
    uint64_t row_bytes; // of pixels in a row
    uint64_t rows;
};

// Plane `plane` of a valid `layout` (framecl_layout_problem() returned NULL).
PlaneRows planeRows(const framecl_frame_layout& layout, uint32_t plane);

} // namespace framecl::protocol
