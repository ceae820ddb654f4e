#include "pipeline/plugin_registry.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include <dlfcn.h>
#include <stdlib.h> // mkdtemp
#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join

#include "base/abi_enum.hpp"
#include "base/log.hpp"
#include "pipeline/kernel_source.hpp"
#include "pipeline/plane_image.hpp"

namespace framecl::pipeline {
namespace {

namespace fs = std::filesystem;

// Room for a plugin's error text; longer ones are cut.
constexpr size_t error_capacity = 256;

std::string formatText(const framecl_format& format)
{
    const char* name = framecl_format_name(format.fourcc);
    return fmt::format("{} {}x{}", name ? name : fmt::format("fourcc 0x{:08x}", format.fourcc),
                       format.width, format.height);
}

std::string origin(const fs::path& file)
{
    return file.empty() ? "built in" : file.string();
}

// A C string from the plugin, copied; NULL reads as empty.
std::string copyString(const char* text)
{
    return text ? text : "";
}

// An integer a double holds exactly, as the bounds and default of an INT must be.
bool isExactInteger(double value)
{
    return std::trunc(value) == value && std::fabs(value) <= 0x1p53;
}

// Why a parameter's schema cannot be used, or nothing.
std::optional<std::string> schemaProblem(const ParamSchema& p)
{
    // Comparisons written so that nan fails them.
    switch (p.type) {
    case FRAMECL_PARAM_TYPE_INT:
    case FRAMECL_PARAM_TYPE_FLOAT:
        if (!(p.min <= p.max))
            return fmt::format("min {} is not at most max {}", p.min, p.max);
        if (p.type == FRAMECL_PARAM_TYPE_INT &&
            !(isExactInteger(p.min) && isExactInteger(p.max) && isExactInteger(p.default_number)))
            return fmt::format("min {}, max {} and default {} must be integers", p.min, p.max,
                               p.default_number);
        if (!(p.default_number >= p.min && p.default_number <= p.max))
            return fmt::format("default {} is not between {} and {}", p.default_number, p.min,
                               p.max);
        return std::nullopt;
    case FRAMECL_PARAM_TYPE_BOOL:
        if (p.default_number != 0 && p.default_number != 1)
            return fmt::format("default {} is not 0 or 1", p.default_number);
        return std::nullopt;
    case FRAMECL_PARAM_TYPE_ENUM:
        if (p.allowed.empty())
            return std::string("an ENUM without allowed values");
        if (std::find(p.allowed.begin(), p.allowed.end(), "") != p.allowed.end())
            return std::string("an allowed value is empty");
        if (std::find(p.allowed.begin(), p.allowed.end(), p.default_string) == p.allowed.end())
            return fmt::format("default '{}' is not one of {}", p.default_string,
                               fmt::join(p.allowed, ", "));
        return std::nullopt;
    case FRAMECL_PARAM_TYPE_FLOAT_LIST:
        if (p.max_count == 0)
            return std::string("max_count is 0");
        if (!(p.min <= p.max))
            return fmt::format("min {} is not at most max {}", p.min, p.max);
        return std::nullopt;
    }
    return std::nullopt; // not reached: the type was checked as the plugin loaded
}

// Why a plan cannot be executed, or nothing. `out` is what negotiate gave for `in`.
std::optional<std::string> planProblem(const framecl_plan& plan, const framecl_format& in,
                                       const framecl_format& out, uint32_t kernel_file_count,
                                       uint32_t output_image_planes, bool has_param_block)
{
    if (plan.dispatch_count == 0 || plan.dispatch_count > FRAMECL_MAX_DISPATCHES)
        return fmt::format("dispatch_count {} is not between 1 and {}", plan.dispatch_count,
                           FRAMECL_MAX_DISPATCHES);
    if (plan.intermediate_count > FRAMECL_MAX_INTERMEDIATES)
        return fmt::format("intermediate_count {} is above {}", plan.intermediate_count,
                           FRAMECL_MAX_INTERMEDIATES);
    for (uint32_t i = 0; i < plan.intermediate_count; ++i) {
        const framecl_format& format = plan.intermediates[i].format;
        framecl_frame_layout layout{};
        if (framecl_format_planes(format.fourcc) != 1 ||
            framecl_packed_layout(format.fourcc, format.width, format.height, &layout) == 0)
            return fmt::format("intermediate {} is {}, not a single-plane format of non-zero size",
                               i, formatText(format));
    }
    if (plan.state_count > FRAMECL_MAX_STATES)
        return fmt::format("state_count {} is above {}", plan.state_count, FRAMECL_MAX_STATES);
    for (uint32_t i = 0; i < plan.state_count; ++i) {
        const framecl_format& format = plan.states[i].format;
        framecl_frame_layout layout{};
        if (framecl_format_planes(format.fourcc) != 1 ||
            framecl_packed_layout(format.fourcc, format.width, format.height, &layout) == 0)
            return fmt::format("state {} is {}, not a single-plane format of non-zero size", i, formatText(format));
    }
    if (plan.constant_count > FRAMECL_MAX_CONSTANTS)
        return fmt::format("constant_count {} is above {}", plan.constant_count, FRAMECL_MAX_CONSTANTS);
    for (uint32_t i = 0; i < plan.constant_count; ++i)
        if (plan.constants[i].size == 0 || plan.constants[i].size > FRAMECL_MAX_CONSTANT_BYTES)
            return fmt::format("constant {} has {} bytes, not between 1 and {}", i, plan.constants[i].size,
                               FRAMECL_MAX_CONSTANT_BYTES);

    const uint32_t in_planes = framecl_format_planes(in.fourcc);
    const uint32_t out_planes = framecl_format_planes(out.fourcc);
    // How each output plane and intermediate is bound, as a buffer or as an image: one
    // or the other throughout the plan (plugin.h).
    uint32_t output_buffers = 0, output_images = 0, intermediate_buffers = 0, intermediate_images = 0;
    for (uint32_t d = 0; d < plan.dispatch_count; ++d) {
        const framecl_dispatch& dispatch = plan.dispatches[d];
        const auto problem = [&](const std::string& what) {
            return fmt::format("dispatch {}: {}", d, what);
        };
        if (!dispatch.kernel || !*dispatch.kernel)
            return problem("no kernel name");
        if (dispatch.kernel_file >= kernel_file_count)
            return problem(fmt::format("kernel_file {}, but the plugin has {} kernel file{}",
                                       dispatch.kernel_file, kernel_file_count,
                                       kernel_file_count == 1 ? "" : "s"));
        if (dispatch.dims != 1 && dispatch.dims != 2)
            return problem(fmt::format("dims {} is not 1 or 2", dispatch.dims));
        for (uint32_t axis = 0; axis < dispatch.dims; ++axis)
            if (dispatch.global[axis] == 0)
                return problem(fmt::format("global[{}] is 0", axis));
        // OpenCL takes a local size for every dimension or for none.
        if (dispatch.dims == 2 && (dispatch.local_hint[0] == 0) != (dispatch.local_hint[1] == 0))
            return problem(fmt::format("local_hint {}x{} sets one axis only",
                                       dispatch.local_hint[0], dispatch.local_hint[1]));
        const uint32_t axes = dispatch.dims == 2 ? FRAMECL_AXIS_X | FRAMECL_AXIS_Y : FRAMECL_AXIS_X;
        if (dispatch.tileable_axes & ~axes)
            return problem(
                fmt::format("tileable_axes 0x{:x} names an axis a {}-dimensional dispatch lacks",
                            dispatch.tileable_axes, dispatch.dims));
        if (dispatch.arg_count > FRAMECL_MAX_ARGS)
            return problem(
                fmt::format("arg_count {} is above {}", dispatch.arg_count, FRAMECL_MAX_ARGS));
        for (uint32_t a = 0; a < dispatch.arg_count; ++a) {
            const framecl_arg& arg = dispatch.args[a];
            const auto argProblem = [&](const std::string& what) {
                return problem(fmt::format("argument {}: {}", a, what));
            };
            const std::optional<framecl_arg_kind> kind = abiEnum(arg.kind, FRAMECL_ARG_STATISTICS);
            if (!kind)
                return argProblem(fmt::format("unknown kind {}", abiInteger(arg.kind)));
            switch (*kind) {
            case FRAMECL_ARG_INPUT_PLANE:
            case FRAMECL_ARG_INPUT_IMAGE:
                if (arg.index >= in_planes)
                    return argProblem(fmt::format("input plane {}, but {} has {}", arg.index,
                                                  formatText(in), in_planes));
                if (*kind == FRAMECL_ARG_INPUT_IMAGE && !planeImage(in, arg.index))
                    return argProblem(fmt::format("input plane {} as an image, but {} has no image form",
                                                  arg.index, formatText(in)));
                break;
            case FRAMECL_ARG_OUTPUT_PLANE:
            case FRAMECL_ARG_OUTPUT_IMAGE:
                if (arg.index >= out_planes)
                    return argProblem(fmt::format("output plane {}, but {} has {}", arg.index,
                                                  formatText(out), out_planes));
                if (*kind == FRAMECL_ARG_OUTPUT_IMAGE && !(output_image_planes >> arg.index & 1u))
                    return argProblem(fmt::format("output plane {} as an image, which the daemon did not ask for",
                                                  arg.index));
                (*kind == FRAMECL_ARG_OUTPUT_IMAGE ? output_images : output_buffers) |= 1u << arg.index;
                break;
            case FRAMECL_ARG_INTERMEDIATE:
            case FRAMECL_ARG_INTERMEDIATE_IMAGE:
                if (arg.index >= plan.intermediate_count)
                    return argProblem(fmt::format("intermediate {}, but the plan declares {}",
                                                  arg.index, plan.intermediate_count));
                if (*kind == FRAMECL_ARG_INTERMEDIATE_IMAGE && !planeImage(plan.intermediates[arg.index].format, 0))
                    return argProblem(fmt::format("intermediate {} as an image, but {} has no image form", arg.index,
                                                  formatText(plan.intermediates[arg.index].format)));
                (*kind == FRAMECL_ARG_INTERMEDIATE_IMAGE ? intermediate_images : intermediate_buffers) |=
                    1u << arg.index;
                break;
            case FRAMECL_ARG_PARAMS:
                if (!has_param_block)
                    return argProblem("the parameter block, but the plugin has no param_block");
                break;
            case FRAMECL_ARG_STATE:
                if (arg.index >= plan.state_count)
                    return argProblem(fmt::format("state {}, but the plan declares {}", arg.index, plan.state_count));
                break;
            case FRAMECL_ARG_LOCAL:
                if (arg.local_bytes == 0)
                    return argProblem("local memory of 0 bytes");
                break;
            case FRAMECL_ARG_CONSTANT:
                if (arg.index >= plan.constant_count)
                    return argProblem(fmt::format("constant {}, but the plan declares {}", arg.index,
                                                  plan.constant_count));
                break;
            case FRAMECL_ARG_UINT:
            case FRAMECL_ARG_INT:
            case FRAMECL_ARG_FLOAT:
            case FRAMECL_ARG_STATISTICS:
                break;
            }
        }
    }
    if (const uint32_t both = output_buffers & output_images)
        return fmt::format("output plane {} is bound both as a buffer and as an image", std::countr_zero(both));
    if (const uint32_t both = intermediate_buffers & intermediate_images)
        return fmt::format("intermediate {} is bound both as a buffer and as an image", std::countr_zero(both));
    return std::nullopt;
}

// Why a file or directory may not be trusted with code: writable by a user other than
// its owner and root. Group write counts unless the group is root's.
std::optional<std::string> writableByOthers(const fs::path& path)
{
    struct stat info {};
    if (stat(path.c_str(), &info) != 0)
        return fmt::format("cannot be examined: {}", std::strerror(errno));
    const unsigned mode = info.st_mode & 07777;
    if (info.st_mode & S_IWOTH)
        return fmt::format("is writable by all users (mode {:04o})", mode);
    if ((info.st_mode & S_IWGRP) && info.st_gid != 0)
        return fmt::format("is writable by group {} (mode {:04o})", info.st_gid, mode);
    return std::nullopt;
}

// glibc answers a dlopen of a path it has loaded with the object already loaded, even
// when the file has been replaced since (a plugin rebuilt or upgraded before SIGHUP),
// for as long as an open session keeps the old registry. So each file is opened
// through a link of a name never used before: the loader then tells files apart by
// device and inode, sharing an unchanged file and loading a replaced one.
class ModuleOpener {
public:
    ModuleOpener()
    {
        std::error_code ec;
        std::string pattern = (fs::temp_directory_path(ec) / "framecld-plugins-XXXXXX").string();
        std::string why = ec.message();
        if (!ec && mkdtemp(pattern.data())) // mode 0700: nobody else can swap a link
            link_dir_ = pattern;
        else if (!ec)
            why = std::strerror(errno);
        if (link_dir_.empty())
            log::get("pipeline")
                ->warn("no directory for plugin links ({}): a plugin replaced "
                       "on disk is not reloaded until framecld restarts",
                       why);
    }
    ~ModuleOpener()
    {
        std::error_code ec;
        if (!link_dir_.empty())
            fs::remove_all(link_dir_, ec);
    }
    ModuleOpener(const ModuleOpener&) = delete;
    ModuleOpener& operator=(const ModuleOpener&) = delete;

    // The loaded object, closed when the last owner lets go, or dlopen's error with
    // the link's name put back to the file's.
    Result<std::shared_ptr<void>> open(const fs::path& file)
    {
        static std::atomic<uint64_t> opened{0};
        fs::path name = file;
        std::error_code ec;
        if (!link_dir_.empty()) {
            const fs::path link =
                link_dir_ / fmt::format("{}-{}", opened++, file.filename().string());
            fs::create_symlink(fs::absolute(file, ec), link, ec);
            if (!ec)
                name = link;
        }
        void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        std::string error = handle ? std::string() : dlerror();
        if (name != file)
            fs::remove(name, ec); // the loader keeps what it mapped
        if (!handle) {
            for (size_t at = error.find(name.string()); at != std::string::npos;
                 at = error.find(name.string(), at + file.string().size()))
                error.replace(at, name.string().size(), file.string());
            return fail(error);
        }
        return std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
    }

private:
    fs::path link_dir_; // empty: files are opened by their own path
};

// The shared object's plugin, or why it is refused ("<file>: <why>").
Result<Plugin> loadFile(ModuleOpener& opener, const fs::path& file)
{
    const auto refused = [&](const std::string& why) {
        return fail(fmt::format("{}: {}", file.string(), why));
    };

    // The directory the file is listed in, and the one holding it when it is a link.
    std::error_code ec;
    const fs::path real = fs::canonical(file, ec);
    if (ec)
        return refused(ec.message());
    if (auto problem = writableByOthers(real))
        return refused(fmt::format("the file {}", *problem));
    for (const fs::path& dir : {file.parent_path(), real.parent_path()})
        if (auto problem = writableByOthers(dir))
            return refused(fmt::format("its directory {} {}", dir.string(), *problem));

    auto module = opener.open(file);
    if (!module)
        return refused(fmt::format("dlopen failed: {}", module.error().message));

    dlerror(); // clear any earlier error, as dlsym(3) advises
    void* symbol = dlsym(module->get(), FRAMECL_PLUGIN_ENTRY);
    if (!symbol)
        return refused(
            fmt::format("no symbol {} (is it exported with C linkage?)", FRAMECL_PLUGIN_ENTRY));
    const auto entry = reinterpret_cast<framecl_plugin_entry>(symbol);
    const framecl_plugin* descriptor = entry();
    if (!descriptor)
        return refused(fmt::format("{}() returned NULL", FRAMECL_PLUGIN_ENTRY));
    return Plugin::fromDescriptor(descriptor, file, std::move(*module));
}

} // namespace

// Kernel names the plugin returned in plans, copied: a plan's name may sit in a buffer
// the plugin reuses, while the daemon holds plans long after the call.
struct Plugin::KernelNames {
    std::mutex mutex; // plans may be asked for from several threads
    std::set<std::string, std::less<>> names;
};

Plugin::Plugin(Plugin&&) noexcept = default;
Plugin& Plugin::operator=(Plugin&&) noexcept = default;
Plugin::~Plugin() = default;

Result<Plugin> Plugin::fromDescriptor(const framecl_plugin* descriptor, fs::path file,
                                      std::shared_ptr<void> module)
{
    const std::string where = origin(file);
    // Only the first field is read before the version is known to be one this framecld
    // loads: the rest of another version's struct may be laid out differently. An older
    // version's descriptor is this one's first fields, and nothing past them is read.
    if (descriptor->abi_version < FRAMECL_PLUGIN_ABI_OLDEST || descriptor->abi_version > FRAMECL_PLUGIN_ABI_VERSION)
        return fail(fmt::format("{}: plugin ABI version {}, this framecld loads {} to {}", where,
                                descriptor->abi_version, FRAMECL_PLUGIN_ABI_OLDEST, FRAMECL_PLUGIN_ABI_VERSION));
    if (!descriptor->name || !*descriptor->name)
        return fail(fmt::format("{}: the descriptor has no name", where));
    const std::string name = descriptor->name;
    const auto refused = [&](const std::string& why) {
        return fail(fmt::format("{}: plugin '{}': {}", where, name, why));
    };
    if (!descriptor->negotiate)
        return refused("negotiate is NULL");
    if (!descriptor->plan)
        return refused("plan is NULL");
    if (descriptor->kernel_file_count == 0)
        return refused("it declares no kernel files");
    if (!descriptor->kernel_files)
        return refused(fmt::format("kernel_files is NULL, kernel_file_count {}",
                                   descriptor->kernel_file_count));
    if (descriptor->param_count > 0 && !descriptor->params)
        return refused(fmt::format("params is NULL, param_count {}", descriptor->param_count));

    Plugin plugin;
    plugin.descriptor_ = descriptor;
    plugin.file_ = std::move(file);
    plugin.name_ = name;
    plugin.version_ = copyString(descriptor->version);
    plugin.description_ = copyString(descriptor->description);
    plugin.build_options_ = copyString(descriptor->build_options);
    plugin.kernel_names_ = std::make_unique<KernelNames>();
    plugin.param_block_ = descriptor->abi_version >= 5 ? descriptor->param_block : nullptr;
    plugin.pointwise_ = descriptor->abi_version >= 6 ? descriptor->pointwise : nullptr;

    for (uint32_t i = 0; i < descriptor->kernel_file_count; ++i) {
        const char* kernel_file = descriptor->kernel_files[i];
        if (!kernel_file || !*kernel_file)
            return refused(fmt::format("kernel file {} has no name", i));
        plugin.kernel_files_.emplace_back(kernel_file);
    }

    for (uint32_t i = 0; i < descriptor->param_count; ++i) {
        const framecl_param_schema& in = descriptor->params[i];
        if (!in.name || !*in.name)
            return refused(fmt::format("parameter {} has no name", i));
        const std::optional<framecl_param_type> type = abiEnum(in.type, FRAMECL_PARAM_TYPE_FLOAT_LIST);
        if (!type)
            return refused(fmt::format("parameter '{}': unknown type {}", in.name, abiInteger(in.type)));
        ParamSchema p{.name = in.name,
                      .type = *type,
                      .help = copyString(in.help),
                      .default_number = in.default_number,
                      .default_string = copyString(in.default_string),
                      .min = in.min,
                      .max = in.max,
                      .allowed = {},
                      .max_count = in.max_count};
        for (const char* const* allowed = *type == FRAMECL_PARAM_TYPE_ENUM ? in.allowed : nullptr;
             allowed && *allowed; ++allowed)
            p.allowed.emplace_back(*allowed);
        if (auto problem = schemaProblem(p))
            return refused(fmt::format("parameter '{}': {}", p.name, *problem));
        for (const ParamSchema& earlier : plugin.params_)
            if (earlier.name == p.name)
                return refused(fmt::format("parameter '{}' is declared twice", p.name));
        plugin.params_.push_back(std::move(p));
    }

    plugin.module_ = std::move(module);
    return plugin;
}

std::string Plugin::label() const
{
    return fmt::format("plugin '{}' ({})", name_, origin(file_));
}

Result<framecl_format> Plugin::negotiate(const framecl_format& in,
                                         const ResolvedParams& params) const
{
    // A ResolvedParams of another plugin would have the plugin read past the array.
    if (params.size() != params_.size())
        return fail(fmt::format("{}: {} parameter values for {} parameters", label(), params.size(),
                                params_.size()));
    // plugin.h promises a plugin only frames framecld can hold: a known format, at least
    // 1x1, each plane's offset and stride within 32 bits (a zero side once divided by
    // zero in a plugin's aspect ratio; the fuzzer found it).
    framecl_frame_layout layout{};
    if (framecl_packed_layout(in.fourcc, in.width, in.height, &layout) == 0)
        return fail(fmt::format("{}: {} is not a format and size framecld can hold", label(), formatText(in)));
    framecl_format out{};
    std::array<char, error_capacity> error{};
    const int status =
        descriptor_->negotiate(&in, params.values(), &out, error.data(), error.size());
    error.back() = '\0'; // the plugin may have filled the buffer to its end
    if (status != 0)
        return fail(error[0]
                        ? std::string(error.data())
                        : fmt::format("{} refused {} without saying why", label(), formatText(in)));
    if (framecl_packed_layout(out.fourcc, out.width, out.height, &layout) == 0)
        return fail(fmt::format("{} answered {} for {}: not a format and size framecld can hold",
                                label(), formatText(out), formatText(in)));
    return out;
}

Result<framecl_plan> Plugin::plan(const framecl_format& in, const ResolvedParams& params,
                                  uint32_t output_image_planes) const
{
    auto out = negotiate(in, params);
    if (!out)
        return tl::unexpected(out.error());

    framecl_plan plan{}; // "plan arrives zeroed" (plugin.h)
    const framecl_plan_request request{output_image_planes};
    std::array<char, error_capacity> error{};
    const int status = descriptor_->plan(&in, params.values(), &request, &plan, error.data(), error.size());
    error.back() = '\0';
    if (status != 0)
        return fail(error[0] ? std::string(error.data())
                             : fmt::format("{} could not plan {} and did not say why", label(),
                                           formatText(in)));
    if (auto problem = planProblem(plan, in, *out, uint32_t(kernel_files_.size()), output_image_planes,
                                   param_block_ != nullptr))
        return fail(
            fmt::format("{} returned a bad plan for {}: {}", label(), formatText(in), *problem));

    // Past the counts, the plugin may have left anything; the daemon's copy holds zeros.
    std::fill(std::begin(plan.intermediates) + plan.intermediate_count,
              std::end(plan.intermediates), framecl_intermediate{});
    std::fill(std::begin(plan.dispatches) + plan.dispatch_count, std::end(plan.dispatches),
              framecl_dispatch{});
    std::fill(std::begin(plan.constants) + plan.constant_count, std::end(plan.constants),
              framecl_constant{});
    std::fill(std::begin(plan.states) + plan.state_count, std::end(plan.states), framecl_state{});
    for (uint32_t d = 0; d < plan.dispatch_count; ++d) {
        framecl_dispatch& dispatch = plan.dispatches[d];
        dispatch.kernel = keepKernelName(dispatch.kernel);
        std::fill(std::begin(dispatch.args) + dispatch.arg_count, std::end(dispatch.args),
                  framecl_arg{});
        // The ABI gives these kinds no index; the daemon's fused plans use it (the member
        // stage whose block a PARAMS argument binds), so a plugin's stray value is dropped.
        for (uint32_t a = 0; a < dispatch.arg_count; ++a)
            if (dispatch.args[a].kind == FRAMECL_ARG_PARAMS || dispatch.args[a].kind == FRAMECL_ARG_STATISTICS)
                dispatch.args[a].index = 0;
    }
    return plan;
}

Result<std::optional<PointwiseFunction>> Plugin::pointwise(const framecl_format& in,
                                                           const ResolvedParams& params) const
{
    if (!pointwise_)
        return std::nullopt;
    framecl_pointwise answer{}; // "arrives zeroed" (plugin.h)
    std::array<char, error_capacity> error{};
    const int status = pointwise_(&in, params.values(), &answer, error.data(), error.size());
    error.back() = '\0';
    if (status != 0)
        return fail(error[0] ? std::string(error.data())
                             : fmt::format("{} could not say whether it is pointwise for {} and did not say why",
                                           label(), formatText(in)));
    const auto bad = [&](const std::string& what) {
        return fail(fmt::format("{} returned a bad pointwise answer for {}: {}", label(), formatText(in), what));
    };
    // An ABI 6 plugin's answer is shorter: fused_loads stays as it arrived, zero.
    if (answer.fused_loads > 1)
        return bad(fmt::format("fused_loads {}, not 0 or 1", answer.fused_loads));
    if (!answer.function && answer.fused_loads)
        return PointwiseFunction{{}, 0, 1, false, true};
    if (!answer.function)
        return std::nullopt;
    const std::string function(answer.function, strnlen(answer.function, 256));
    const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
    const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    const bool identifier = !function.empty() && function.size() < 256 && letter(function[0]) &&
                            std::all_of(function.begin(), function.end(), [&](char c) { return letter(c) || digit(c); });
    if (!identifier)
        return bad(fmt::format("function '{}' is not an OpenCL C identifier", function));
    if (answer.kernel_file >= kernel_files_.size())
        return bad(fmt::format("kernel_file {}, but the plugin has {}", answer.kernel_file, kernel_files_.size()));
    if (answer.block_width != answer.block_height || (answer.block_width != 1 && answer.block_width != 2))
        return bad(fmt::format("a block of {}x{}, not 1x1 or 2x2", answer.block_width, answer.block_height));
    if (answer.reads_input > 1)
        return bad(fmt::format("reads_input {}, not 0 or 1", answer.reads_input));
    return PointwiseFunction{function, answer.kernel_file, answer.block_width, answer.reads_input == 1,
                             answer.fused_loads == 1};
}

Result<std::vector<uint8_t>> Plugin::paramBlock(const framecl_format& in, const ResolvedParams& params) const
{
    if (!param_block_)
        return std::vector<uint8_t>{};
    std::vector<uint8_t> block(FRAMECL_MAX_PARAM_BLOCK_BYTES);
    uint32_t used = 0;
    std::array<char, error_capacity> error{};
    const int status = param_block_(&in, params.values(), block.data(), uint32_t(block.size()), &used, error.data(),
                                    error.size());
    error.back() = '\0';
    if (status != 0)
        return fail(error[0] ? std::string(error.data())
                             : fmt::format("{} could not make its parameter block for {} and did not say why", label(),
                                           formatText(in)));
    if (used == 0 || used > block.size())
        return fail(fmt::format("{} returned a parameter block of {} bytes for {}, not between 1 and {}", label(),
                                used, formatText(in), block.size()));
    block.resize(used);
    return block;
}

const char* Plugin::keepKernelName(const char* name) const
{
    std::lock_guard lock(kernel_names_->mutex);
    return kernel_names_->names.emplace(name).first->c_str();
}

std::shared_ptr<const PluginRegistry> PluginRegistry::load(const std::vector<fs::path>& plugin_dirs)
{
    auto registry = std::make_shared<PluginRegistry>();
    auto copy = Plugin::fromDescriptor(&copyPluginDescriptor(), {});
    if (copy) // a check of framecld itself, which its tests make
        registry->plugins_.push_back(std::move(*copy));
    else
        registry->refuse(copy.error().message);

    ModuleOpener opener;
    for (const fs::path& dir : plugin_dirs) {
        std::error_code ec;
        std::vector<fs::path> files;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code type_ec; // a dangling link is no plugin, and no reason to stop
            if (it->path().extension() == ".so" && it->is_regular_file(type_ec))
                files.push_back(it->path());
        }
        if (ec) {
            registry->refuse(fmt::format("plugin directory {}: {}", dir.string(), ec.message()));
            continue;
        }
        std::sort(files.begin(), files.end());

        for (const fs::path& file : files) {
            auto plugin = loadFile(opener, file);
            if (!plugin) {
                registry->refuse(plugin.error().message);
                continue;
            }
            if (const Plugin* earlier = registry->find(plugin->name())) {
                registry->refuse(fmt::format("{}: plugin '{}' is already loaded ({})",
                                             file.string(), plugin->name(),
                                             origin(earlier->file())));
                continue;
            }
            registry->plugins_.push_back(std::move(*plugin));
        }
    }

    std::vector<std::string> loaded;
    for (const Plugin& plugin : registry->plugins_)
        loaded.push_back(plugin.file().empty()
                             ? plugin.name() + " (built in)"
                             : fmt::format("{} {} ({})", plugin.name(), plugin.version(),
                                           plugin.file().string()));
    log::get("pipeline")
        ->info("plugins: {}; {} refused", fmt::join(loaded, ", "), registry->problems_.size());
    return registry;
}

void PluginRegistry::refuse(std::string problem)
{
    log::get("pipeline")->warn("{}; skipped", problem);
    problems_.push_back(std::move(problem));
}

const Plugin* PluginRegistry::find(const std::string& name) const
{
    for (const Plugin& plugin : plugins_)
        if (plugin.name() == name)
            return &plugin;
    return nullptr;
}

std::vector<const Plugin*> PluginRegistry::plugins() const
{
    std::vector<const Plugin*> all;
    for (const Plugin& plugin : plugins_)
        all.push_back(&plugin);
    return all;
}

std::shared_ptr<const PluginPrograms>
PluginPrograms::build(std::shared_ptr<const PluginRegistry> registry, const gpu::GpuContext& gpu,
                      gpu::ProgramCache& cache, const std::vector<fs::path>& kernel_dirs,
                      const std::set<std::string>& used)
{
    auto logger = log::get("pipeline");
    auto programs = std::make_shared<PluginPrograms>();
    size_t from_cache = 0, from_source = 0;
    auto prelude = readKernelFile(kernel_dirs, kernel_prelude_file);
    auto fusion = readKernelFile(kernel_dirs, kernel_fusion_file);
    if (!prelude)
        programs->fusion_prelude_ = tl::unexpected(prelude.error());
    else if (!fusion)
        programs->fusion_prelude_ = tl::unexpected(fusion.error());
    else
        programs->fusion_prelude_ = *prelude + *fusion;
    size_t unused = 0;
    for (const Plugin* plugin : registry->plugins()) {
        if (!used.contains(plugin->name())) {
            ++unused;
            continue;
        }
        std::vector<cl::Program> built;
        std::vector<std::string> texts;
        std::optional<std::string> problem = prelude ? std::nullopt : std::optional(prelude.error().message);
        for (const std::string& file : plugin->kernelFiles()) {
            if (problem)
                break;
            auto text = readKernelFile(kernel_dirs, file);
            if (!text) {
                problem = text.error().message;
                break;
            }
            auto program = cache.build(gpu.context()(), gpu.device(), gpu.capabilities(), *prelude + *text,
                                       file, plugin->buildOptions());
            if (!program) {
                problem = program.error().message;
                break;
            }
            ++(program->origin == gpu::BuiltProgram::Origin::CacheHit ? from_cache : from_source);
            built.push_back(std::move(program->program));
            texts.push_back(std::move(*text));
        }
        if (problem) {
            programs->problems_.push_back(
                fmt::format("{} is not usable: {}", plugin->label(), *problem));
            logger->warn("{}", programs->problems_.back());
            continue;
        }
        programs->programs_.emplace(plugin, std::move(built));
        programs->texts_.emplace(plugin, std::move(texts));
    }
    programs->context_ = gpu.context();
    programs->device_ = gpu.device();
    programs->capabilities_ = gpu.capabilities();
    programs->cache_dir_ = cache.dir();
    logger->info(
        "programs: {} ready ({} from the cache, {} built from source); {} plugin{} not usable; {} that no "
        "pipeline uses not built",
        from_cache + from_source, from_cache, from_source, programs->problems_.size(),
        programs->problems_.size() == 1 ? "" : "s", unused);
    programs->registry_ = std::move(registry);
    return programs;
}

cl_program PluginPrograms::program(const Plugin& plugin, uint32_t kernel_file) const
{
    const auto found = programs_.find(&plugin);
    if (found == programs_.end() || kernel_file >= found->second.size())
        return nullptr;
    return found->second[kernel_file]();
}

const std::string* PluginPrograms::kernelText(const Plugin& plugin, uint32_t kernel_file) const
{
    const auto found = texts_.find(&plugin);
    if (found == texts_.end() || kernel_file >= found->second.size())
        return nullptr;
    return &found->second[kernel_file];
}

Result<std::string> PluginPrograms::fusionPrelude() const
{
    return fusion_prelude_;
}

const FusedProgram& PluginPrograms::fused(const std::string& source, const std::string& kernel,
                                          const std::string& options) const
{
    const std::lock_guard lock(fused_mutex_);
    const std::string key = options + '\0' + source;
    if (const auto found = fused_.find(key); found != fused_.end())
        return found->second;
    // Its own cache object: ProgramCache is for one thread, and this runs on the session
    // preparer's. Entries are replaced atomically, so two objects may share the directory.
    gpu::ProgramCache cache(cache_dir_);
    FusedProgram& made = fused_[key];
    made.kernel = kernel;
    auto built = cache.build(context_(), device_, capabilities_, source, kernel, options);
    if (built)
        made.program = std::move(built->program);
    else
        made.error = built.error().message;
    return made;
}

} // namespace framecl::pipeline
