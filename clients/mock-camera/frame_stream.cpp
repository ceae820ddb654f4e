#include "frame_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "client-tools/frame_file.hpp"
#include "client-tools/shared_frame_buffer.hpp"
#include "synthetic_frame.hpp"

namespace framecl::mock_camera {
namespace {

using Clock = std::chrono::steady_clock;

// An output buffer and the frame it holds, until that frame's Done.
struct Slot {
    cli::SharedFrameBuffer output;
    std::optional<uint64_t> in_flight;
    Clock::time_point submitted;
};

// An input buffer, drawn once when the stream is set up: frame i is input i mod count.
struct Input {
    cli::SharedFrameBuffer buffer;
    std::optional<uint64_t> in_flight;
};

enum class Wait { Done, TimedOut, Broken };

class FrameStream {
public:
    FrameStream(framecl_client* client, const StreamSettings& settings) : client_(client), settings_(settings) {}

    ~FrameStream()
    {
        // Failure does not matter here: the daemon closes what is left at Goodbye.
        if (session_)
            framecl_close_session(client_, *session_);
    }

    Result<void> setUp()
    {
        const framecl_frame_layout& in = settings_.input;
        uint32_t session = 0;
        framecl_frame_layout output{};
        if (framecl_open_session_with(client_, settings_.pipeline.c_str(), in.fourcc, in.width, in.height, nullptr,
                                      0, &settings_.session_options, &session, &output) != 0)
            return fail(fmt::format("opening pipeline '{}' for {} {}x{}: {}", settings_.pipeline,
                                    framecl_format_name(in.fourcc), in.width, in.height, framecl_last_error(client_)));
        session_ = session;
        // One input more than outputs, so that an output slot gets a different picture
        // each time round and a stale output cannot pass --verify.
        for (uint32_t i = 0; i <= settings_.pool; ++i) {
            auto input = cli::SharedFrameBuffer::create(client_, in, fmt::format("mock-camera-in-{}", i),
                                                        settings_.buffers);
            if (!input)
                return tl::unexpected(input.error());
            if (auto drawn = draw(*input, i); !drawn)
                return tl::unexpected(drawn.error());
            inputs_.push_back(Input{std::move(*input), std::nullopt});
        }
        for (uint32_t i = 0; i < settings_.pool; ++i) {
            auto out = cli::SharedFrameBuffer::create(client_, output, fmt::format("mock-camera-out-{}", i),
                                                      settings_.buffers);
            if (!out)
                return tl::unexpected(out.error());
            slots_.push_back(Slot{std::move(*out), std::nullopt, {}});
        }
        report_.buffers = inputs_.front().buffer.source();
        return {};
    }

    StreamReport run()
    {
        const auto period = settings_.fps > 0 ? std::chrono::duration<double>(1.0 / settings_.fps)
                                               : std::chrono::duration<double>(0);
        const auto start = Clock::now();
        first_submit_ = last_done_ = start;
        for (uint64_t i = 0; i < settings_.frames; ++i) {
            if (stopRequested()) {
                report_.stopped_early = true;
                break;
            }
            Slot& slot = slots_[i % slots_.size()];
            Input& input = inputs_[i % inputs_.size()];
            while (slot.in_flight || input.in_flight) {
                const Wait wait = receiveDone(Clock::now() + std::chrono::milliseconds(settings_.timeout_ms));
                if (wait == Wait::TimedOut)
                    return finish(fmt::format("stopping at frame {}: no Done freed a buffer within {} ms (--timeout)",
                                              i, settings_.timeout_ms));
                if (wait == Wait::Broken)
                    return finish(fmt::format("stopping at frame {}: the connection to framecld broke", i));
            }
            if (!waitUntil(start + std::chrono::duration_cast<Clock::duration>(period * double(i))))
                return finish(fmt::format("stopping at frame {}: the connection to framecld broke", i));
            submit(slot, input, i);
        }
        const auto deadline = Clock::now() + std::chrono::milliseconds(settings_.timeout_ms);
        while (std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.in_flight.has_value(); }))
            if (receiveDone(deadline) != Wait::Done)
                return finish(fmt::format("gave up waiting for the last frames after {} ms (--timeout)",
                                          settings_.timeout_ms));
        return finish({});
    }

private:
    // Frame `index` of the stream, drawn into `input` between the CPU-access calls.
    Result<void> draw(const cli::SharedFrameBuffer& input, uint64_t index) const
    {
        auto access = input.cpuAccess(FRAMECL_CPU_WRITE);
        if (!access)
            return tl::unexpected(access.error());
        if (settings_.motion)
            generateMovingFrame(settings_.input, index, settings_.seed, *settings_.motion, input.bytes());
        else
            generateFrame(settings_.input, index, settings_.seed, input.bytes());
        return {};
    }

    void submit(Slot& slot, Input& input, uint64_t sequence)
    {
        const auto now = Clock::now();
        if (report_.frames++ == 0)
            first_submit_ = now;
        if (framecl_submit(client_, *session_, input.buffer.id(), slot.output.id(), sequence) != 0) {
            ++report_.failed;
            sayOnce(fmt::format("submit: {}", framecl_last_error(client_)));
            return;
        }
        slot.in_flight = sequence;
        input.in_flight = sequence;
        slot.submitted = now;
    }

    // With --verify: the output equals its input, both read between CPU-access calls.
    bool outputMatches(const Slot& slot, const Input& input)
    {
        auto output_access = slot.output.cpuAccess(FRAMECL_CPU_READ);
        auto input_access = input.buffer.cpuAccess(FRAMECL_CPU_READ);
        if (!output_access || !input_access) {
            sayOnce(!output_access ? output_access.error().message : input_access.error().message);
            return false;
        }
        return std::ranges::equal(input.buffer.bytes(), slot.output.bytes());
    }

    // Takes in the Dones that arrive until `due`, so that their latency is measured when
    // they come rather than when the next frame is sent. False if the client broke.
    bool stopRequested() const { return settings_.stop_requested && settings_.stop_requested->load(); }

    bool waitUntil(Clock::time_point due)
    {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now());
            if (left.count() <= 0) {
                std::this_thread::sleep_until(due); // the part under a millisecond
                return true;
            }
            if (receiveDone(due) == Wait::Broken)
                return false;
        }
    }

    Wait receiveDone(Clock::time_point deadline)
    {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        framecl_done done{};
        const int got = framecl_next_done(client_, int(std::max<int64_t>(left.count(), 0)), &done);
        if (got == -ETIMEDOUT || got == -EAGAIN)
            return Wait::TimedOut;
        if (got != 0) {
            sayOnce(fmt::format("waiting for frames: {}", framecl_last_error(client_)));
            return Wait::Broken;
        }
        handle(done);
        return Wait::Done;
    }

    void handle(const framecl_done& done)
    {
        const auto now = Clock::now();
        Slot& slot = slots_[done.sequence % slots_.size()];
        if (slot.in_flight != done.sequence) {
            sayOnce(fmt::format("framecld answered frame {}, which is not in flight", done.sequence));
            return;
        }
        // Every Done frees its slot: a frame that failed, was refused (busy) or dropped
        // before it started no longer holds its buffers in the daemon.
        slot.in_flight.reset();
        Input& input = inputs_[done.sequence % inputs_.size()];
        input.in_flight.reset();
        last_done_ = now;

        switch (done.status) {
        case FRAMECL_FRAME_OK:
            ++report_.ok;
            // Only processed frames are compared: a refusal (busy) is answered at once
            // and overtakes the frames before it by design.
            if (highest_ok_ && done.sequence < *highest_ok_)
                ++report_.out_of_order;
            highest_ok_ = std::max(highest_ok_.value_or(0), done.sequence);
            report_.latency_ms.push_back(std::chrono::duration<double, std::milli>(now - slot.submitted).count());
            addStageTimes(done);
            if (settings_.verify && !outputMatches(slot, input))
                ++report_.mismatches;
            if (settings_.dump_dir)
                dump(slot.output, done.sequence);
            break;
        case FRAMECL_FRAME_FAILED:
            ++report_.failed;
            sayOnce(done.error);
            break;
        case FRAMECL_FRAME_DROPPED:
            ++report_.dropped;
            break;
        case FRAMECL_FRAME_BUSY:
            ++report_.busy;
            break;
        case FRAMECL_FRAME_LOST:
            ++report_.lost;
            break;
        }
    }

    void addStageTimes(const framecl_done& done)
    {
        for (uint32_t s = 0; s < done.stage_count && s < FRAMECL_MAX_STAGES; ++s) {
            const std::string name = done.stages[s].stage;
            auto it = std::find_if(report_.stages.begin(), report_.stages.end(),
                                   [&](const StageTimes& stage) { return stage.name == name; });
            if (it == report_.stages.end())
                it = report_.stages.insert(report_.stages.end(), StageTimes{name, {}});
            it->gpu_ns.push_back(done.stages[s].gpu_ns);
        }
    }

    void dump(const cli::SharedFrameBuffer& output, uint64_t sequence)
    {
        auto access = output.cpuAccess(FRAMECL_CPU_READ);
        if (!access) {
            sayOnce(access.error().message);
            return;
        }
        const framecl_frame_layout& layout = output.layout();
        const char* extension = cli::frameFileExtension(layout.fourcc);
        const auto file = *settings_.dump_dir / fmt::format("frame-{:06}{}", sequence, extension);
        const auto written = cli::pngHoldsFormat(layout.fourcc) ? cli::writePngFrame(file, layout, output.bytes())
                                                                : cli::writeRawFrame(file, layout, output.bytes());
        if (!written)
            fmt::print(stderr, "framecl-mock-camera: {}\n", written.error().message);
    }

    // Frames that never came back count as lost; `stopped` says why, when the stream
    // did not end normally.
    StreamReport finish(const std::string& stopped)
    {
        if (!stopped.empty())
            fmt::print(stderr, "framecl-mock-camera: {}\n", stopped);
        report_.lost += uint64_t(std::count_if(slots_.begin(), slots_.end(),
                                               [](const Slot& s) { return s.in_flight.has_value(); }));
        report_.seconds = std::max(0.0, std::chrono::duration<double>(last_done_ - first_submit_).count());
        report_.first_submit_s = std::chrono::duration<double>(first_submit_.time_since_epoch()).count();
        report_.last_done_s = std::chrono::duration<double>(last_done_.time_since_epoch()).count();
        return report_;
    }

    // One line per distinct text, so that a pipeline failing every frame says why once.
    void sayOnce(const std::string& text)
    {
        if (said_.insert(text).second)
            fmt::print(stderr, "framecl-mock-camera: {}\n", text);
    }

    framecl_client* client_;
    const StreamSettings& settings_;
    std::optional<uint32_t> session_;
    std::vector<Input> inputs_;
    std::vector<Slot> slots_;
    StreamReport report_;
    std::optional<uint64_t> highest_ok_; // the highest sequence that came back ok
    Clock::time_point first_submit_;
    Clock::time_point last_done_;
    std::set<std::string> said_;
};

} // namespace

Result<StreamReport> streamFrames(framecl_client* client, const StreamSettings& settings)
{
    FrameStream stream(client, settings);
    if (auto ready = stream.setUp(); !ready)
        return tl::unexpected(ready.error());
    return stream.run();
}

} // namespace framecl::mock_camera
