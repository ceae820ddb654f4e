// Test plugin `broken_kernel`: a valid descriptor whose kernel file,
// broken_kernel.cl, does not compile. It loads; building its programs marks it
// unusable, with the compiler's build log, while the other plugins still run.
#include <framecl/plugin.h>

namespace {

const char* const kernel_files[] = {"broken_kernel.cl"};

int negotiate(const framecl_format* in, const framecl_param_value*, framecl_format* out, char*,
              size_t)
{
    *out = *in;
    return 0;
}

int plan(const framecl_format* in, const framecl_param_value*, const framecl_plan_request*, framecl_plan* plan, char*, size_t)
{
    framecl_dispatch& dispatch = plan->dispatches[0];
    dispatch.kernel = "broken";
    dispatch.dims = 2;
    dispatch.global[0] = in->width;
    dispatch.global[1] = in->height;
    plan->dispatch_count = 1;
    return 0;
}

const framecl_plugin descriptor = {
    .abi_version = FRAMECL_PLUGIN_ABI_VERSION,
    .name = "broken_kernel",
    .version = "1.0",
    .description = "Its kernel file has a syntax error",
    .param_count = 0,
    .params = nullptr,
    .kernel_file_count = 1,
    .kernel_files = kernel_files,
    .build_options = nullptr,
    .negotiate = negotiate,
    .plan = plan,
    .param_block = nullptr,
    .pointwise = nullptr,
};

} // namespace

extern "C" const framecl_plugin* framecl_plugin_descriptor(void)
{
    return &descriptor;
}
