#include "process_in_process.hpp"

#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "batch_progress.hpp"
#include "client-tools/frame_file.hpp"
#include "config/default_paths.hpp"
#include "config/loader.hpp"
#include "gpu/context.hpp"
#include "gpu/replay.hpp"
#include "image_files.hpp"
#include "output_target.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/in_process_pipeline.hpp"
#include "pipeline/tuner.hpp"

namespace framecl::cli {
namespace {

namespace fs = std::filesystem;

fs::path outputPath(const ProcessRequest& request, const fs::path& input)
{
    if (!outputIsDirectory(request.output, request.inputs.size()))
        return request.output;
    return request.output / input.filename().replace_extension(".png");
}

} // namespace

int processInProcess(const ProcessRequest& request)
{
    auto config = config::loadConfigFile(request.config_file, config::defaultPaths());
    if (!config) {
        fmt::print(stderr, "{}\n", config.error().joined());
        return 1;
    }
    auto engine = pipeline::startEngine(*config);
    if (!engine) {
        fmt::print(stderr, "framecl: {}\n", engine.error().message);
        return 1;
    }
    const gpu::GpuContext& gpu = *engine->gpu;
    const pipeline::PipelineSet& set = engine->pipelines;
    const auto definition = set.catalog.find(request.pipeline);
    if (!definition) {
        for (const auto& problem : set.problems)
            fmt::print(stderr, "framecl: {}\n", problem);
        std::string offered;
        for (const auto& p : set.catalog.pipelines)
            offered += (offered.empty() ? "" : ", ") + p->name;
        fmt::print(stderr, "framecl: no pipeline named '{}' (offered: {})\n", request.pipeline, offered);
        return 1;
    }
    pipeline::SessionOptions options{gpu::chooseRecordingMode(gpu.capabilities(), gpu.vendor(), config->gpu.recording),
                                     config->gpu.onchip_intermediates, {}, config->limits.max_frame_pixels};
    // The daemon's tuning, with the same cache: a size tuned by either is tuned for both.
    std::optional<pipeline::Tuner> tuner;
    if (config->gpu.tuning == config::Tuning::Auto)
        tuner.emplace(gpu, config->daemon.cache_dir);
    if (auto prepared = prepareOutput(request.output, request.inputs.size()); !prepared) {
        fmt::print(stderr, "framecl: {}\n", prepared.error().message);
        return 1;
    }

    // Inputs of different sizes or formats each get a pipeline opened for them.
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, pipeline::InProcessPipeline> opened;
    BatchProgress progress(request.inputs.size());
    for (const fs::path& input : request.inputs) {
        const auto result = [&]() -> Result<fs::path> {
            auto image = readImageFile(input);
            if (!image)
                return tl::unexpected(image.error());
            const auto key = std::make_tuple(image->fourcc, image->width, image->height);
            auto it = opened.find(key);
            if (it == opened.end()) {
                const pipeline::FrameShape shape{image->fourcc, image->width, image->height};
                if (tuner)
                    options.stage_choices = tuner->choose(*definition, shape);
                auto open = pipeline::InProcessPipeline::open(gpu, definition, shape, options);
                if (!open)
                    return fail(fmt::format("{}: {}", input.string(), open.error().message));
                it = opened.emplace(key, std::move(*open)).first;
            }
            auto output = it->second.process(*image);
            if (!output)
                return fail(fmt::format("{}: {}", input.string(), output.error().message));
            const fs::path out_file = outputPath(request, input);
            framecl_frame_layout layout{};
            framecl_packed_layout(output->fourcc, output->width, output->height, &layout);
            if (auto written = writePngFrame(out_file, layout, output->bytes); !written)
                return tl::unexpected(written.error());
            return out_file;
        }();
        progress.finished(input, result);
    }
    return progress.exitCode();
}

} // namespace framecl::cli
