#pragma once
// Every pixel format framecl holds, for what must try them all: the catalog checking that
// a pipeline's stages chain for some input format.

#include <cstdint>
#include <vector>

namespace framecl::protocol {

// The fourccs of include/framecl/format.h's formats, in the order of protocol/format.cpp's table.
std::vector<uint32_t> knownFormats();

} // namespace framecl::protocol
