#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <numeric>

#include <spdlog/sinks/ringbuffer_sink.h>

#include "base/log.hpp"
#include "gpu/program_cache.hpp"
#include "gpu_test_support.hpp"
#include "temp_dir.hpp"

using namespace framecl;
using namespace framecl::gpu;
using Origin = BuiltProgram::Origin;

namespace {

constexpr std::string_view kAddOne = R"CL(
__kernel void add_one(__global int* data)
{
    const size_t i = get_global_id(0);
    data[i] += 1;
}
)CL";

constexpr std::string_view kTimesTwo = R"CL(
__kernel void times_two(__global int* data)
{
    data[get_global_id(0)] *= 2;
}
)CL";

Result<BuiltProgram> buildIn(ProgramCache& cache, const GpuContext& gpu, std::string_view source,
                             std::string_view name = "add_one.cl", std::string_view options = "")
{
    return cache.build(gpu.context()(), gpu.device(), gpu.capabilities(), source, name, options);
}

std::vector<std::filesystem::path> filesIn(const std::filesystem::path& dir)
{
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        files.push_back(entry.path());
    return files;
}

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void writeFile(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

} // namespace

TEST_CASE("a first build is a miss that writes one cache file")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache cache(dir.path() / "programs"); // created on demand
    auto built = buildIn(cache, *gpu, kAddOne);
    REQUIRE_MESSAGE(built.has_value(), (built ? "" : built.error().message));
    CHECK(built->origin == Origin::BuiltFromSource);
    CHECK(built->rejection == CacheRejection::Absent);
    const auto files = filesIn(dir.path() / "programs");
    REQUIRE(files.size() == 1);
    CHECK(files[0] == built->entry);
    CHECK(files[0].filename().string().size() == 32 + 4); // hex XXH3-128 + ".bin"
}

TEST_CASE("a second cache on the same directory loads the binary")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache first(dir.path());
    REQUIRE(buildIn(first, *gpu, kAddOne).has_value());

    ProgramCache second(dir.path());
    auto built = buildIn(second, *gpu, kAddOne);
    REQUIRE(built.has_value());
    CHECK(built->origin == Origin::CacheHit);
    CHECK(built->rejection == CacheRejection::None);
}

TEST_CASE("different build options make a different cache entry")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache cache(dir.path());
    REQUIRE(buildIn(cache, *gpu, kAddOne).has_value());
    auto built = buildIn(cache, *gpu, kAddOne, "add_one.cl", "-cl-fast-relaxed-math");
    REQUIRE(built.has_value());
    CHECK(built->origin == Origin::BuiltFromSource);
    CHECK(filesIn(dir.path()).size() == 2);
}

TEST_CASE("a corrupted entry is detected, rebuilt from source and rewritten")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache first(dir.path());
    auto original = buildIn(first, *gpu, kAddOne);
    REQUIRE(original.has_value());

    // The binary is the tail of the file: flip bytes there.
    std::string bytes = readFile(original->entry);
    REQUIRE(bytes.size() > 64);
    for (size_t i = bytes.size() - 16; i < bytes.size(); ++i)
        bytes[i] = static_cast<char>(~bytes[i]);
    writeFile(original->entry, bytes);

    ProgramCache second(dir.path());
    auto rebuilt = buildIn(second, *gpu, kAddOne);
    REQUIRE(rebuilt.has_value());
    CHECK(rebuilt->origin == Origin::BuiltFromSource);
    CHECK(rebuilt->rejection == CacheRejection::Corrupt);
    CHECK(readFile(original->entry) != bytes);

    ProgramCache third(dir.path());
    auto reloaded = buildIn(third, *gpu, kAddOne);
    REQUIRE(reloaded.has_value());
    CHECK(reloaded->origin == Origin::CacheHit);
    CHECK(filesIn(dir.path()).size() == 1);
}

TEST_CASE("an entry written for another key is rejected as foreign and replaced")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache cache(dir.path());
    auto add_one = buildIn(cache, *gpu, kAddOne);
    auto times_two = buildIn(cache, *gpu, kTimesTwo, "times_two.cl");
    REQUIRE(add_one.has_value());
    REQUIRE(times_two.has_value());
    REQUIRE(add_one->entry != times_two->entry);

    // A valid entry, but for add_one.cl, under times_two.cl's name.
    std::filesystem::copy_file(add_one->entry, times_two->entry,
                               std::filesystem::copy_options::overwrite_existing);

    ProgramCache second(dir.path());
    auto rebuilt = buildIn(second, *gpu, kTimesTwo, "times_two.cl");
    REQUIRE(rebuilt.has_value());
    CHECK(rebuilt->origin == Origin::BuiltFromSource);
    CHECK(rebuilt->rejection == CacheRejection::Foreign);
    CHECK(readFile(times_two->entry) != readFile(add_one->entry));

    ProgramCache third(dir.path());
    auto reloaded = buildIn(third, *gpu, kTimesTwo, "times_two.cl");
    REQUIRE(reloaded.has_value());
    CHECK(reloaded->origin == Origin::CacheHit);
}

TEST_CASE("an intact entry whose binary the driver refuses is rebuilt from source")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache first(dir.path());
    auto original = buildIn(first, *gpu, kAddOne);
    REQUIRE(original.has_value());

    // Same key, valid checksum, but not a binary any driver accepts (guide §5.7.4: a
    // driver update may make old binaries unusable). The key length sits at offset 12.
    const std::string bytes = readFile(original->entry);
    const size_t key_length = static_cast<unsigned char>(bytes[12]) | static_cast<unsigned char>(bytes[13]) << 8;
    writeFile(original->entry, encodeCacheEntry(bytes.substr(16, key_length), "not a program binary"));

    ProgramCache second(dir.path());
    auto rebuilt = buildIn(second, *gpu, kAddOne);
    REQUIRE(rebuilt.has_value());
    CHECK(rebuilt->origin == Origin::BuiltFromSource);
    CHECK(rebuilt->rejection == CacheRejection::Incompatible);

    ProgramCache third(dir.path());
    auto reloaded = buildIn(third, *gpu, kAddOne);
    REQUIRE(reloaded.has_value());
    CHECK(reloaded->origin == Origin::CacheHit);
}

TEST_CASE("a cache directory that cannot be created logs one warning and builds anyway")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    // Tests run as root, which ignores permissions: a regular file as the parent is
    // what stops the directory from being created.
    writeFile(dir.path() / "not-a-directory", "x");
    const auto cache_dir = dir.path() / "not-a-directory" / "programs";

    auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    auto logger = log::get("gpu");
    logger->sinks().push_back(sink);

    ProgramCache cache(cache_dir);
    auto first = buildIn(cache, *gpu, kAddOne);
    auto second = buildIn(cache, *gpu, kTimesTwo, "times_two.cl");
    logger->sinks().pop_back();

    REQUIRE(first.has_value());
    REQUIRE(second.has_value());
    CHECK(first->origin == Origin::BuiltFromSource);
    CHECK(first->entry.empty());
    CHECK_FALSE(std::filesystem::exists(cache_dir));
    CHECK(filesIn(dir.path()).size() == 1); // only the blocking file

    int warnings = 0;
    for (const auto& message : sink->last_raw())
        warnings += message.level == spdlog::level::warn;
    CHECK(warnings == 1);
}

TEST_CASE("a source with a syntax error gives an error with the build log and the source name")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache cache(dir.path());
    auto built = buildIn(cache, *gpu, "__kernel void broken(__global int* data) { data[0] = }", "broken.cl");
    REQUIRE_FALSE(built.has_value());
    const std::string& message = built.error().message;
    INFO(message);
    CHECK(message.find("broken.cl") != std::string::npos);
    CHECK(message.find("clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
    CHECK(message.find("error") != std::string::npos); // the compiler's own words
    CHECK(filesIn(dir.path()).empty());
}

TEST_CASE("a program loaded from the cache runs and adds one to every element")
{
    auto gpu = test::openTestGpu();
    test::TempDir dir;
    ProgramCache first(dir.path());
    REQUIRE(buildIn(first, *gpu, kAddOne).has_value());
    ProgramCache second(dir.path());
    auto built = buildIn(second, *gpu, kAddOne);
    REQUIRE(built.has_value());
    REQUIRE(built->origin == Origin::CacheHit);

    std::vector<cl_int> values(64);
    std::iota(values.begin(), values.end(), -10);
    cl_int err = CL_SUCCESS;
    cl::Kernel kernel(built->program, "add_one", &err);
    REQUIRE(err == CL_SUCCESS);
    cl::Buffer buffer(gpu->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, values.size() * sizeof(cl_int),
                      values.data(), &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(kernel.setArg(0, buffer) == CL_SUCCESS);
    REQUIRE(gpu->queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(values.size())) == CL_SUCCESS);
    std::vector<cl_int> result(values.size());
    REQUIRE(gpu->queue().enqueueReadBuffer(buffer, CL_TRUE, 0, result.size() * sizeof(cl_int), result.data()) ==
            CL_SUCCESS);
    for (size_t i = 0; i < result.size(); ++i)
        CHECK(result[i] == static_cast<cl_int>(i) - 10 + 1);
}
