#include "gpu/program_cache.hpp"

#include <system_error>

#include "base/log.hpp"
#include "base/read_file.hpp"
#include "base/write_file.hpp"
#include "gpu/cl_error.hpp"

namespace framecl::gpu {
namespace {

// Guide §5.7.4: a binary is only valid for the device and the driver version that
// built it, so both are part of the key, with the source and the options.
std::string cacheKey(const Capabilities& caps, std::string_view source, std::string_view options)
{
    return "device: " + caps.name + "\ndriver: " + caps.driver_version + "\nsource: " + xxh3Hex(source) +
           "\noptions: " + std::string(options) + "\n";
}

std::string buildLog(cl_program program, cl_device_id device)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS ||
        size == 0)
        return "(no build log)";
    std::string text(size, '\0');
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr) !=
        CL_SUCCESS)
        return "(no build log)";
    if (const size_t end = text.find('\0'); end != std::string::npos)
        text.resize(end);
    return text;
}

// The program's binary for its one device; empty when the driver gives none.
std::string programBinary(cl_program program)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) != CL_SUCCESS)
        return {};
    std::string binary(size, '\0');
    auto* data = reinterpret_cast<unsigned char*>(binary.data());
    if (size == 0 || clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr) != CL_SUCCESS)
        return {};
    return binary;
}

// Guide §5.7.1: a binary may be refused by a newer compiler even on the same device;
// the caller then falls back to the source.
Result<cl::Program> programFromBinary(cl_context context, cl_device_id device, std::string_view binary,
                                      const std::string& options, const std::string& object)
{
    const auto* data = reinterpret_cast<const unsigned char*>(binary.data());
    const size_t size = binary.size();
    cl_int err = CL_SUCCESS;
    cl::Program program(clCreateProgramWithBinary(context, 1, &device, &size, &data, nullptr, &err));
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateProgramWithBinary", err, object));
    err = clBuildProgram(program(), 1, &device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS)
        return fail(clFailure("clBuildProgram", err, object) + " on a cached binary");
    return program;
}

Result<cl::Program> programFromSource(cl_context context, cl_device_id device, std::string_view source,
                                      std::string_view source_name, const std::string& options,
                                      const std::string& object)
{
    const char* text = source.data();
    const size_t length = source.size();
    cl_int err = CL_SUCCESS;
    cl::Program program(clCreateProgramWithSource(context, 1, &text, &length, &err));
    if (err != CL_SUCCESS)
        return fail(std::string(source_name) + ": " + clFailure("clCreateProgramWithSource", err, object));
    err = clBuildProgram(program(), 1, &device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS)
        return fail(std::string(source_name) + ": " + clFailure("clBuildProgram", err, object) +
                    "\nbuild log:\n" + buildLog(program(), device));
    return program;
}

} // namespace

ProgramCache::ProgramCache(std::filesystem::path dir) : dir_(std::move(dir))
{
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_, ec)) {
        readable_ = false;
        disable("cannot create '" + dir_.string() + "': " +
                (ec ? ec.message() : std::string("not a directory")));
    }
}

void ProgramCache::disable(const std::string& reason)
{
    // One warning per cache: later builds just go without it.
    if (writable_)
        log::get("gpu")->warn("program cache disabled, building from source: {}", reason);
    writable_ = false;
}

Result<BuiltProgram> ProgramCache::build(cl_context context, cl_device_id device, const Capabilities& caps,
                                         std::string_view source, std::string_view source_name,
                                         std::string_view options)
{
    auto logger = log::get("gpu");
    const std::string key = cacheKey(caps, source, options);
    const std::string options_text(options); // clBuildProgram wants it NUL-terminated
    const std::string object = "device '" + caps.name + "'";
    BuiltProgram built;

    if (readable_) {
        built.entry = dir_ / (xxh3Hex(key) + ".bin");
        built.rejection = CacheRejection::Absent;
        std::error_code ec;
        if (std::filesystem::exists(built.entry, ec)) {
            // An entry that cannot be read decodes as corrupt and is rewritten.
            const std::string file = readFile(built.entry).value_or(std::string{});
            auto binary = decodeCacheEntry(file, key);
            if (!binary) {
                built.rejection = binary.error();
            } else if (auto program = programFromBinary(context, device, *binary, options_text, object)) {
                logger->debug("program '{}': loaded from cache {}", source_name, built.entry.string());
                built.program = std::move(*program);
                built.origin = BuiltProgram::Origin::CacheHit;
                built.rejection = CacheRejection::None;
                return built;
            } else {
                logger->info("program '{}': {}", source_name, program.error().message);
                built.rejection = CacheRejection::Incompatible;
            }
        }
    }

    auto program = programFromSource(context, device, source, source_name, options_text, object);
    if (!program)
        return tl::unexpected(program.error());

    if (built.rejection == CacheRejection::Absent || built.rejection == CacheRejection::None)
        logger->debug("program '{}': built from source", source_name);
    else
        logger->info("program '{}': cache entry {} ({}), rebuilt from source", source_name,
                     built.entry.string(), cacheRejectionName(built.rejection));
    if (readable_ && writable_)
        store(built.entry, key, (*program)(), source_name);
    built.program = std::move(*program);
    built.origin = BuiltProgram::Origin::BuiltFromSource;
    return built;
}

void ProgramCache::store(const std::filesystem::path& entry, const std::string& key, cl_program program,
                         std::string_view source_name)
{
    const std::string binary = programBinary(program);
    if (binary.empty()) {
        log::get("gpu")->info("program '{}': the driver gives no binary; not cached", source_name);
        return;
    }
    const std::string bytes = encodeCacheEntry(key, binary);

    if (auto written = writeFileAtomically(entry, bytes); !written)
        disable(written.error().message);
}

} // namespace framecl::gpu
