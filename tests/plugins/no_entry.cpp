// Test plugin `no_entry`: a shared object that exports nothing, as when a plugin's
// entry point is written without C linkage (and so, like everything else here, stays
// hidden). The daemon must refuse it and say which symbol is missing.
#include <framecl/plugin.h>

namespace {

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "no_entry",
    .version = "1.0",
    .description = "Its entry point is not exported",
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

// Not `extern "C"`, and not the entry's name: the plugin's mistake under test.
const framecl_plugin* framecl_plugin_descriptor_cpp()
{
    return &descriptor;
}
