#pragma once
// What the self-test's checks share (self_test.hpp): the opened device with the
// self-test's pipelines, frames run through a session, buffers shared with the device
// the way a client's are, and byte comparisons that say where they differ.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "config/config.hpp"
#include "gpu/context.hpp"
#include "memory/imported_buffer.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/session.hpp"
#include "selftest/filter_cases.hpp"
#include "selftest/self_test.hpp"

namespace framecl::selftest {

struct SelfTestDevice {
    const config::Config& config;
    const gpu::GpuContext& gpu;
    const pipeline::Catalog& catalog;
};

// The session options framecld would open a client's session with under `config`,
// recording as asked.
pipeline::SessionOptions sessionOptions(const SelfTestDevice& device, gpu::RecordingMode recording);

// The pipeline `name` of the catalog; fails with why it was left out.
Result<std::shared_ptr<const pipeline::PipelineDefinition>> findPipeline(const SelfTestDevice& device,
                                                                         const std::string& name);

// `frames` (packed) through one session of `pipeline` opened for `input` with
// `options`, each read back; the last one's output, packed.
Result<PackedFrame> runFrames(const SelfTestDevice& device, std::shared_ptr<const pipeline::PipelineDefinition> pipeline,
                              const pipeline::FrameShape& input, const pipeline::SessionOptions& options,
                              const std::vector<PackedFrame>& frames);

// Empty where `got` is `expected` within `tolerance` on every byte; else how many
// bytes differ, and the first.
std::string differences(const PackedFrame& got, const PackedFrame& expected, int tolerance = 0);

// A sealed memfd of `bytes` holding `content` (zeros past it), as a client shares one.
Result<UniqueFd> memfdWith(const PackedFrame& content, size_t bytes);

// `fd`, a frame of `shape` packed, imported as framecld imports a client's buffer.
Result<std::shared_ptr<memory::ImportedBuffer>> importShared(const SelfTestDevice& device, UniqueFd fd,
                                                             const pipeline::FrameShape& shape);

// The first `bytes` of a memfd or dma-buf, through a mapping (a dma-buf has no
// read()), bracketed for the CPU's read where it is a dma-buf.
Result<PackedFrame> readShared(int fd, size_t bytes);

// A frame through `session` between two buffers that `make` shares the way a client
// does (a memfd, a dma-buf), the input holding `input`: the output read back, and the
// path framecld imported the input by.
using MakeBuffer = std::function<Result<UniqueFd>(const PackedFrame& content, size_t bytes)>;
struct SharedRun {
    PackedFrame output;
    memory::ImportPath input_path;
};
Result<SharedRun> runShared(const SelfTestDevice& device, pipeline::Session& session, const PackedFrame& input,
                            const MakeBuffer& make);

// A frame of `shape` of random bytes (fixed seed), packed.
PackedFrame randomFrame(const pipeline::FrameShape& shape, uint32_t seed);

void checkDevice(const SelfTestDevice& device, std::vector<Check>& checks);
void checkImports(const SelfTestDevice& device, std::vector<Check>& checks);
void checkRecordings(const SelfTestDevice& device, std::vector<Check>& checks);
void checkFilters(const SelfTestDevice& device, std::vector<Check>& checks);
void probeFairness(const SelfTestDevice& device, std::vector<Check>& checks);

// The self-test's own pipelines (beside the built-in copy): the filter cases', named
// filterPipelineName(i), and the two-stage one the recording checks run.
std::string filterPipelineName(size_t case_index);
inline constexpr const char* recording_pipeline = "self-test-recording";
std::string selfTestPipelines(const std::vector<FilterCase>& cases);

// The recording pipeline's output for `input`, a frame of R8 `shape`, by the CPU
// reference: a 3x3 box, then a 5x5 box with the reflect101 border.
PackedFrame recordingReference(const PackedFrame& input, const pipeline::FrameShape& shape);

} // namespace framecl::selftest
