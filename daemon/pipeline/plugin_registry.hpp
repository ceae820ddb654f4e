#pragma once
// The filter plugins framecld runs: the built-in `copy` and the shared objects found in
// daemon.plugin_dirs (include/framecl/plugin.h, docs/plugin-guide.md). Everything a
// plugin declares is checked and copied when it loads, and everything it returns is
// checked and copied when it returns, so a broken plugin is refused with a message
// rather than trusted. A plugin that fails a check is left out, logged once and
// recorded; every other plugin still loads.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "framecl/plugin.h"
#include "gpu/context.hpp"
#include "gpu/program_cache.hpp"
#include "pipeline/plugin_params.hpp"

namespace framecl::pipeline {

// A stage's answer to plugin.h's `pointwise`, checked: its function, in kernel file
// `kernel_file`, makes blocks of `block` x `block` pixels (1 or 2), from the same pixels
// of its input, or reading its input planes itself (`reads_input`: a stencil). With
// `fused_loads`, a stencil whose plan's kernels take the stages before it into their
// loads; `function` may then be empty.
struct PointwiseFunction {
    std::string function;
    uint32_t kernel_file = 0;
    uint32_t block = 1;
    bool reads_input = false;
    bool fused_loads = false;
};

// One plugin: its descriptor's data in owned C++ and the calls into it.
class Plugin {
public:
    // Checks `descriptor` and copies what it declares. The ABI version is read first
    // and nothing else is read when it differs. `file` names the plugin in messages
    // (empty for one compiled into framecld); `module` keeps the shared object that
    // holds the descriptor loaded, and is released after everything else.
    static Result<Plugin> fromDescriptor(const framecl_plugin* descriptor,
                                         std::filesystem::path file,
                                         std::shared_ptr<void> module = {});

    Plugin(Plugin&&) noexcept;
    Plugin& operator=(Plugin&&) noexcept;
    ~Plugin();

    const std::string& name() const { return name_; }
    const std::string& version() const { return version_; }
    const std::string& description() const { return description_; }
    const std::vector<ParamSchema>& params() const { return params_; }
    const std::vector<std::string>& kernelFiles() const { return kernel_files_; }
    const std::string& buildOptions() const { return build_options_; }
    // The shared object; empty for a plugin compiled into framecld.
    const std::filesystem::path& file() const { return file_; }
    const framecl_plugin* descriptor() const { return descriptor_; }
    // "plugin 'color' (/usr/lib/framecl/plugins/framecl-color.so)", for messages.
    std::string label() const;

    // The output format the plugin gives for `in`: the plugin's own message when it
    // refuses `in`, an error naming the plugin when it answers a format framecld
    // cannot hold.
    Result<framecl_format> negotiate(const framecl_format& in, const ResolvedParams& params) const;

    // The dispatches of one frame of `in`, checked: negotiate must accept `in`; the
    // counts fit the ABI's limits; every dispatch names a kernel and a kernel file of
    // the plugin, has 1 or 2 dimensions of non-zero size and at most FRAMECL_MAX_ARGS
    // arguments; every plane, intermediate and local-memory argument names something
    // that exists; intermediates are single-plane frames of a known format. Kernel
    // names point into strings this Plugin owns, and the entries past each count are
    // zero, so nothing in the plan points into the plugin. `output_image_planes` is the
    // request's (plugin.h): the output planes the next stage reads as images, which the
    // plan may write as images; one it writes as an image unasked is refused, as is a
    // plane or intermediate bound both as a buffer and as an image.
    Result<framecl_plan> plan(const framecl_format& in, const ResolvedParams& params,
                              uint32_t output_image_planes = 0) const;

    // The stage's parameter block for `in` (which negotiate accepted) with `params`:
    // empty for a plugin without one; the plugin's message when it refuses the values.
    Result<std::vector<uint8_t>> paramBlock(const framecl_format& in, const ResolvedParams& params) const;

    // Whether the stage is pointwise for `in` (which negotiate accepted) with `params`,
    // and its function (plugin.h, ABI 6): none for a plugin without `pointwise` and for
    // an answer of no; an error naming the plugin for an answer framecld cannot use (no
    // kernel file of that index, a name that is not an identifier, a block other than
    // 1x1 or 2x2, reads_input other than 0 or 1), or the plugin's own message.
    Result<std::optional<PointwiseFunction>> pointwise(const framecl_format& in, const ResolvedParams& params) const;

private:
    struct KernelNames;

    Plugin() = default;
    const char* keepKernelName(const char* name) const;

    std::shared_ptr<void> module_; // first, so that it is released last
    const framecl_plugin* descriptor_ = nullptr;
    std::filesystem::path file_;
    std::string name_;
    std::string version_;
    std::string description_;
    std::vector<ParamSchema> params_;
    std::vector<std::string> kernel_files_;
    std::string build_options_;
    std::unique_ptr<KernelNames> kernel_names_;
    decltype(framecl_plugin::param_block) param_block_ = nullptr; // null before ABI 5
    decltype(framecl_plugin::pointwise) pointwise_ = nullptr;     // null before ABI 6
};

// The plugins of one load of daemon.plugin_dirs. A SIGHUP loads a new registry; open
// sessions keep the one they were opened with through shared_ptr.
class PluginRegistry {
public:
    // The built-in `copy`, then every `*.so` file directly in each of `plugin_dirs`, in
    // the order given and by name within a directory (dlopen with RTLD_NOW |
    // RTLD_LOCAL). Refused, each with one warning line and an entry in problems(): a
    // file or its directory writable by users other than its owner and root; a file
    // dlopen fails on; one without the entry symbol, or whose entry returns NULL; an
    // ABI version outside FRAMECL_PLUGIN_ABI_OLDEST to _VERSION; a descriptor that fails
    // Plugin::fromDescriptor; a name already loaded. A missing directory is a problem
    // too. Logs one info line listing what loaded. A file replaced on disk since an
    // earlier load, whose registry may still be in use, is loaded anew.
    static std::shared_ptr<const PluginRegistry>
    load(const std::vector<std::filesystem::path>& plugin_dirs);

    const Plugin* find(const std::string& name) const;
    std::vector<const Plugin*> plugins() const; // `copy` first, then in load order
    // "<file>: plugin ABI version 7, this framecld loads 4 to 5", one per refusal.
    const std::vector<std::string>& problems() const { return problems_; }

private:
    void refuse(std::string problem);

    std::vector<Plugin> plugins_;
    std::vector<std::string> problems_;
};

// A fused kernel (pipeline/fusion.hpp) as PluginPrograms built it, or why it did not build.
struct FusedProgram {
    cl::Program program; // null where it did not build
    std::string kernel;
    std::string error;
};

// The kernels of a registry's plugins, built for one device. A plugin whose kernel
// file is missing or does not build is logged with the compiler's build log, recorded
// in problems() and not usable; the others are.
class PluginPrograms {
public:
    // Builds every kernel file of each plugin of `registry` named in `used`, from the
    // first of `kernel_dirs` that holds it, with the plugin's build options, through
    // `cache`; a plugin not named is neither built nor usable. The files' text is kept
    // for the fused kernels built later.
    static std::shared_ptr<const PluginPrograms>
    build(std::shared_ptr<const PluginRegistry> registry, const gpu::GpuContext& gpu, gpu::ProgramCache& cache,
          const std::vector<std::filesystem::path>& kernel_dirs, const std::set<std::string>& used);

    bool usable(const Plugin& plugin) const { return programs_.count(&plugin) != 0; }
    // The program built from `plugin`'s kernel file `kernel_file`, or null when the
    // plugin is not usable (or not of this registry).
    cl_program program(const Plugin& plugin, uint32_t kernel_file) const;
    // "plugin 'x' (<file>) is not usable: <kernel file>: clBuildProgram failed: ...",
    // followed by the build log.
    const std::vector<std::string>& problems() const { return problems_; }

    // The text of `plugin`'s kernel file `kernel_file` as built (after the prelude), or
    // null when the plugin is not usable.
    const std::string* kernelText(const Plugin& plugin, uint32_t kernel_file) const;
    // The prelude and the fused kernels' loads and stores (kernels/fusion.cl), or an error
    // saying which file was missing: then nothing is fused.
    Result<std::string> fusionPrelude() const;
    // Kernel `kernel` of `source`, built with `options` through the program cache, once per
    // source and options for this object's life: later sessions get the same program, and
    // a failure is not tried again. Any thread may call it.
    const FusedProgram& fused(const std::string& source, const std::string& kernel, const std::string& options) const;

private:
    std::shared_ptr<const PluginRegistry> registry_; // keeps alive the plugins keying programs_
    std::map<const Plugin*, std::vector<cl::Program>> programs_;
    std::map<const Plugin*, std::vector<std::string>> texts_;
    Result<std::string> fusion_prelude_ = std::string();
    std::vector<std::string> problems_;
    // For the fused kernels, built at session open on the session preparer's thread.
    cl::Context context_;
    cl_device_id device_ = nullptr;
    gpu::Capabilities capabilities_;
    std::filesystem::path cache_dir_;
    mutable std::mutex fused_mutex_;
    mutable std::map<std::string, FusedProgram> fused_; // by options and source
};

// The descriptor of the built-in `copy` plugin (copy_plugin.cpp): any format framecld
// knows in, the same out, one `copy_plane` dispatch per plane.
const framecl_plugin& copyPluginDescriptor();

} // namespace framecl::pipeline
