#include "process_through_daemon.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "base/read_file.hpp"
#include "batch_progress.hpp"
#include "client-tools/frame_file.hpp"
#include "client-tools/frame_statistics.hpp"
#include "client-tools/frame_options.hpp"
#include "client-tools/shared_frame_buffer.hpp"
#include "image_files.hpp"
#include "output_target.hpp"

namespace framecl::cli {
namespace {

namespace fs = std::filesystem;

// A DMA-BUF heap where there is one, as a camera's frames would be; else sealed memfds.
constexpr framecl_allocate_options buffers{FRAMECL_BUFFERS_AUTO, nullptr};

struct InputFrame {
    framecl_frame_layout layout; // tightly packed
    std::vector<uint8_t> bytes;
};

// A session per input format and size, with the one output buffer its frames go to:
// frames are processed one at a time.
struct OpenSession {
    uint32_t id;
    SharedFrameBuffer output;
};

using SessionKey = std::tuple<uint32_t, uint32_t, uint32_t>; // fourcc, width, height

Result<InputFrame> readInput(const fs::path& file, const std::optional<PackedFrame>& raw)
{
    if (!raw) {
        auto image = readImageFile(file);
        if (!image)
            return tl::unexpected(image.error());
        InputFrame frame{{}, std::move(image->bytes)};
        framecl_packed_layout(image->fourcc, image->width, image->height, &frame.layout);
        return frame;
    }
    auto content = readFile(file);
    if (!content)
        return fail(fmt::format("{}: {}", file.string(), content.error().message()));
    if (content->size() != raw->bytes)
        return fail(fmt::format("{}: {} bytes, but a {} {}x{} frame has {}", file.string(), content->size(),
                                framecl_format_name(raw->layout.fourcc), raw->layout.width, raw->layout.height,
                                raw->bytes));
    return InputFrame{raw->layout, std::vector<uint8_t>(content->begin(), content->end())};
}

bool pipelineOffered(framecl_client* client, const std::string& pipeline)
{
    for (size_t i = 0; i < framecl_pipeline_count(client); ++i)
        if (pipeline == framecl_pipeline_name(client, i))
            return true;
    return false;
}

std::string offeredPipelines(framecl_client* client)
{
    std::string names;
    for (size_t i = 0; i < framecl_pipeline_count(client); ++i)
        names += fmt::format("{}{}", i ? ", " : "", framecl_pipeline_name(client, i));
    return names;
}

const char* statusText(framecl_frame_status status)
{
    switch (status) {
    case FRAMECL_FRAME_OK:
        return "ok";
    case FRAMECL_FRAME_FAILED:
        return "failed";
    case FRAMECL_FRAME_DROPPED:
        return "dropped (past its deadline)";
    case FRAMECL_FRAME_BUSY:
        return "refused: too many frames in flight";
    case FRAMECL_FRAME_LOST:
        return "lost: framecld went away while processing it";
    }
    return "an unknown status";
}

class DaemonBatch {
public:
    DaemonBatch(framecl_client* client, const ProcessRequest& request, int timeout_ms)
        : client_(client), request_(request), timeout_ms_(timeout_ms)
    {
    }

    ~DaemonBatch()
    {
        // Failures do not matter here: the daemon closes what is left at Goodbye.
        for (const auto& [key, session] : sessions_)
            framecl_close_session(client_, session.id);
    }

    Result<fs::path> process(const fs::path& input, const std::optional<PackedFrame>& raw)
    {
        auto frame = readInput(input, raw);
        if (!frame)
            return tl::unexpected(frame.error());
        auto session = sessionFor(frame->layout);
        if (!session)
            return fail(fmt::format("{}: {}", input.string(), session.error().message));

        auto in = SharedFrameBuffer::create(client_, frame->layout, "framecl-input", buffers);
        if (!in)
            return fail(fmt::format("{}: {}", input.string(), in.error().message));
        {
            auto access = in->cpuAccess(FRAMECL_CPU_WRITE);
            if (!access)
                return fail(fmt::format("{}: {}", input.string(), access.error().message));
            std::copy(frame->bytes.begin(), frame->bytes.end(), in->bytes().begin());
        }

        const uint64_t sequence = next_sequence_++;
        if (framecl_submit(client_, (*session)->id, in->id(), (*session)->output.id(), sequence) != 0)
            return fail(fmt::format("{}: {}", input.string(), framecl_last_error(client_)));
        auto done = waitForDone(sequence);
        if (!done)
            return fail(fmt::format("{}: {}", input.string(), done.error().message));
        if (done->status == FRAMECL_FRAME_FAILED)
            return fail(fmt::format("{}: {}", input.string(), done->error));
        if (done->status != FRAMECL_FRAME_OK)
            return fail(fmt::format("{}: {}", input.string(), statusText(done->status)));
        if (framecl_statistics statistics; framecl_done_statistics(client_, &statistics) == 0)
            fmt::print("{}: statistics: {}\n", input.string(), statisticsText(statistics));
        return writeOutput(input, (*session)->output);
    }

private:
    Result<OpenSession*> sessionFor(const framecl_frame_layout& layout)
    {
        const SessionKey key{layout.fourcc, layout.width, layout.height};
        if (auto it = sessions_.find(key); it != sessions_.end())
            return &it->second;
        uint32_t id = 0;
        framecl_frame_layout output{};
        if (framecl_open_session(client_, request_.pipeline.c_str(), layout.fourcc, layout.width, layout.height,
                                 nullptr, 0, &id, &output) != 0)
            return fail(framecl_last_error(client_));
        auto buffer = SharedFrameBuffer::create(client_, output, "framecl-output", buffers);
        if (!buffer) {
            framecl_close_session(client_, id);
            return tl::unexpected(buffer.error());
        }
        return &sessions_.emplace(key, OpenSession{id, std::move(*buffer)}).first->second;
    }

    // Frames go one at a time, but a Done that came too late for an earlier frame (after
    // its timeout) may still arrive first: it is skipped.
    Result<framecl_done> waitForDone(uint64_t sequence)
    {
        framecl_done done{};
        do {
            const int waited = framecl_next_done(client_, timeout_ms_, &done);
            if (waited == -ETIMEDOUT)
                return fail(fmt::format("no answer from framecld within {} ms (--timeout)", timeout_ms_));
            if (waited != 0)
                return fail(framecl_last_error(client_));
        } while (done.sequence != sequence);
        return done;
    }

    Result<fs::path> writeOutput(const fs::path& input, const SharedFrameBuffer& output)
    {
        const framecl_frame_layout& layout = output.layout();
        const bool to_directory = outputIsDirectory(request_.output, request_.inputs.size());
        const char* extension = frameFileExtension(layout.fourcc);
        const fs::path file =
            to_directory ? request_.output / input.filename().replace_extension(extension) : request_.output;
        // A single output file is written as its extension says; a .png refuses what a
        // PNG cannot hold.
        const bool png = to_directory ? pngHoldsFormat(layout.fourcc) : file.extension() == ".png";
        auto access = output.cpuAccess(FRAMECL_CPU_READ);
        if (!access)
            return tl::unexpected(access.error());
        auto written = png ? writePngFrame(file, layout, output.bytes()) : writeRawFrame(file, layout, output.bytes());
        if (!written)
            return tl::unexpected(written.error());
        return file;
    }

    framecl_client* client_;
    const ProcessRequest& request_;
    int timeout_ms_;
    uint64_t next_sequence_ = 1;
    std::map<SessionKey, OpenSession> sessions_;
};

} // namespace

int processThroughDaemon(const ProcessRequest& request, const RawInputFormat& raw, const DaemonOptions& daemon)
{
    std::optional<PackedFrame> raw_frame;
    if (!raw.format.empty()) {
        auto packed = packedFrame(raw.format, raw.size);
        if (!packed) {
            fmt::print(stderr, "framecl: {}\n", packed.error().message);
            return 1;
        }
        raw_frame = *packed;
    }
    auto client = connectToDaemon(daemon);
    if (!client) {
        fmt::print(stderr, "framecl: {}\n", client.error().message);
        return 1;
    }
    if (!pipelineOffered(client->get(), request.pipeline)) {
        fmt::print(stderr, "framecl: framecld offers no pipeline '{}' (it offers: {})\n", request.pipeline,
                   offeredPipelines(client->get()));
        return 1;
    }
    if (auto prepared = prepareOutput(request.output, request.inputs.size()); !prepared) {
        fmt::print(stderr, "framecl: {}\n", prepared.error().message);
        return 1;
    }

    DaemonBatch batch(client->get(), request, daemon.timeout_ms);
    BatchProgress progress(request.inputs.size());
    for (const fs::path& input : request.inputs)
        progress.finished(input, batch.process(input, raw_frame));
    return progress.exitCode();
}

} // namespace framecl::cli
