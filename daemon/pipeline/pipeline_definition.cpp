#include "pipeline/pipeline_definition.hpp"

#include <fmt/format.h>

namespace framecl::pipeline {

std::string describe(const framecl_format& format)
{
    const char* name = framecl_format_name(format.fourcc);
    return fmt::format("{} {}x{}", name ? name : fmt::format("fourcc 0x{:08x}", format.fourcc), format.width,
                       format.height);
}

} // namespace framecl::pipeline
