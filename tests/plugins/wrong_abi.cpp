// Test plugin `wrong_abi`: built for ABI version 99, which no framecld speaks. The
// daemon must refuse it after reading only `abi_version`, naming both versions.
#include <framecl/plugin.h>

namespace {

const framecl_plugin descriptor = {
    .abi_version = 99,
    .name = "wrong_abi",
    .version = "1.0",
    .description = "Declares an ABI version framecld does not speak",
    .param_count = 0,
    .params = nullptr,
    .kernel_file_count = 0,
    .kernel_files = nullptr,
    .build_options = nullptr,
    .negotiate = nullptr,
    .plan = nullptr,
    .param_block = nullptr,
    .pointwise = nullptr,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
