#pragma once
// Builds OpenCL programs, keeping their binaries on disk so that later starts skip the
// compiler (guide §5.7.1, §5.7.3). A binary is only reused on the device and driver
// that made it (guide §5.7.4); anything doubtful falls back to the source.

#include <filesystem>
#include <string>
#include <string_view>

#include <CL/opencl.hpp>

#include "base/result.hpp"
#include "gpu/capabilities.hpp"
#include "gpu/program_cache_entry.hpp"

namespace framecl::gpu {

struct BuiltProgram {
    enum class Origin { CacheHit, BuiltFromSource };
    cl::Program program; // built for the device
    Origin origin = Origin::BuiltFromSource;
    CacheRejection rejection = CacheRejection::None; // why the entry was not used
    std::filesystem::path entry; // the cache file; empty without a usable cache
};

// One file per program: `<hex XXH3-128 of the key>.bin`, where the key is device name,
// driver version, XXH3-128 of the source and the build options. The file holds a magic
// and format version, the full key text, the binary length and an XXH3-128 checksum of
// the binary. Entries are replaced atomically (temp file, fsync, rename), so several
// daemons may share a directory; one ProgramCache is used from one thread.
class ProgramCache {
public:
    // Creates `dir` if missing. A directory that cannot be created or written logs one
    // warning, and programs are then built from source without caching.
    explicit ProgramCache(std::filesystem::path dir);

    const std::filesystem::path& dir() const { return dir_; }

    // A build failure from source returns an error naming `source_name` and carrying
    // the compiler's build log.
    Result<BuiltProgram> build(cl_context context, cl_device_id device, const Capabilities& caps,
                               std::string_view source, std::string_view source_name,
                               std::string_view options);

private:
    void disable(const std::string& reason);
    void store(const std::filesystem::path& entry, const std::string& key, cl_program program,
               std::string_view source_name);

    std::filesystem::path dir_;
    bool readable_ = true; // the directory exists
    bool writable_ = true; // no write has failed yet
};

} // namespace framecl::gpu
