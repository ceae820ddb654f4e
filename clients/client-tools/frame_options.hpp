#pragma once
// The --format and --size options of the client tools (raw inputs of `framecl process`,
// framecl-mock-camera's frames): a pixel format by name and a size as WxH.

#include <cstdint>
#include <string>

#include <framecl/format.h>

#include "base/result.hpp"

namespace framecl::cli {

struct PackedFrame {
    framecl_frame_layout layout; // tightly packed planes
    uint64_t bytes;              // the frame's size in bytes
};

// `format`: a name of framecl_format_from_name, e.g. "nv12" or "srggb10p" (any case);
// `size`: e.g. "1920x1080".
Result<PackedFrame> packedFrame(const std::string& format, const std::string& size);

} // namespace framecl::cli
