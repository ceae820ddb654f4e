// Frames: Submit to the GPU, completion to Done. Exactly one Done per Submit.
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "base/log.hpp"
#include "envelope.hpp"
#include "gpu/cl_error.hpp"
#include "ipc/server.hpp"

namespace framecl::ipc {
namespace {

uint64_t monotonicNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
}

} // namespace

void Server::sendDone(const std::string& identity, uint32_t session, uint64_t sequence, const DoneFields& done)
{
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<wire::StageTime>> stages;
    for (const auto& [name, ns] : done.stages)
        stages.push_back(wire::CreateStageTimeDirect(builder, name.c_str(), ns));
    auto message = wire::CreateDoneDirect(builder, session, sequence, done.status,
                                          done.error.empty() ? nullptr : done.error.c_str(), done.queued_ns,
                                          done.start_ns, done.end_ns, &stages);
    send(identity, protocol::finishEnvelope(builder, message));
}

void Server::onSubmit(ClientState& client, const wire::Submit& submit)
{
    const uint64_t queued_ns = monotonicNs();
    const auto refuse = [&](wire::FrameStatus status, const std::string& error) {
        sendDone(client.identity, submit.session(), submit.sequence(), {status, error, queued_ns, 0, monotonicNs(), {}});
    };

    auto session_it = client.sessions.find(submit.session());
    if (session_it == client.sessions.end()) {
        refuse(wire::FrameStatus::Failed, fmt::format("no session {}", submit.session()));
        return;
    }
    SessionState& state = session_it->second;
    auto input_it = client.buffers.find(submit.input_buffer());
    auto output_it = client.buffers.find(submit.output_buffer());
    if (input_it == client.buffers.end() || output_it == client.buffers.end()) {
        ++state.counters.failed;
        refuse(wire::FrameStatus::Failed,
               fmt::format("no buffer {}", input_it == client.buffers.end() ? submit.input_buffer() : submit.output_buffer()));
        return;
    }
    const auto& input = input_it->second;
    const auto& output = output_it->second;
    if (input == output) {
        ++state.counters.failed;
        refuse(wire::FrameStatus::Failed, "the input and output buffer must differ");
        return;
    }
    auto fits = state.session->checkInput(input->layout());
    if (fits)
        fits = state.session->checkOutput(output->layout());
    if (!fits) {
        ++state.counters.failed;
        refuse(wire::FrameStatus::Failed, fits.error().message);
        return;
    }
    if (client.in_flight >= config_.limits.max_inflight_per_client) {
        ++state.counters.busy;
        refuse(wire::FrameStatus::Busy, fmt::format("{} frames in flight already (limits.max_inflight_per_client)",
                                                    client.in_flight));
        return;
    }

    input->beginAccess(memory::ImportedBuffer::Access::Read);
    output->beginAccess(memory::ImportedBuffer::Access::Write);
    const uint64_t start_ns = monotonicNs();
    auto frame = state.session->enqueue({input->mem(), &input->layout()}, {output->mem(), &output->layout()});
    const uint64_t serial = next_frame_serial_++;
    Result<void> watched = frame ? completions_.notifyOnCompletion(frame->events.back()(), serial)
                                 : Result<void>(tl::unexpected(frame.error()));
    if (!watched) {
        // What was enqueued still runs; wait for it so the buffers outlive its use.
        gpu_.queue().finish();
        input->endAccess(memory::ImportedBuffer::Access::Read);
        output->endAccess(memory::ImportedBuffer::Access::Write);
        ++state.counters.failed;
        refuse(wire::FrameStatus::Failed, watched.error().message);
        return;
    }
    // Guide §5.7: flush so the GPU starts now rather than when the queue fills.
    gpu_.queue().flush();

    ++client.in_flight;
    ++state.in_flight;
    in_flight_.emplace(serial, InFlightFrame{client.token, submit.session(), submit.sequence(), state.session, input,
                                             output, std::move(*frame), queued_ns, start_ns});
}

void Server::onCompletions()
{
    for (const Completion& completion : completions_.take())
        completeFrame(completion.frame, completion.execution_status);
    // Sending may have consumed the ZeroMQ fd's edge; look for requests again.
    drainMessages();
}

void Server::completeFrame(uint64_t serial, cl_int status)
{
    auto it = in_flight_.find(serial);
    if (it == in_flight_.end())
        return;
    InFlightFrame frame = std::move(it->second);
    in_flight_.erase(it);
    frame.input->endAccess(memory::ImportedBuffer::Access::Read);
    frame.output->endAccess(memory::ImportedBuffer::Access::Write);

    DoneFields done{wire::FrameStatus::Ok, {}, frame.queued_ns, frame.start_ns, monotonicNs(), {}};
    if (status != CL_COMPLETE) {
        done.status = wire::FrameStatus::Failed;
        done.error = fmt::format("the GPU failed the frame: {}", gpu::clErrorName(status));
    } else {
        done.stages = frame.session->stageTimes(frame.frame);
    }

    ClientState* client = clientByToken(frame.token);
    if (!client)
        return; // it went away; its buffers go now, with `frame`
    --client->in_flight;
    if (auto state = client->sessions.find(frame.session_id); state != client->sessions.end()) {
        --state->second.in_flight;
        ++(done.status == wire::FrameStatus::Ok ? state->second.counters.done : state->second.counters.failed);
    }
    sendDone(client->identity, frame.session_id, frame.sequence, done);
}

void Server::drain(std::chrono::milliseconds timeout)
{
    if (in_flight_.empty())
        return;
    log::get("ipc")->info("draining {} frames in flight", in_flight_.size());
    gpu_.queue().finish();
    // Completion callbacks run on the runtime's thread, possibly after finish returns.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!in_flight_.empty() && std::chrono::steady_clock::now() < deadline) {
        for (const Completion& completion : completions_.take())
            completeFrame(completion.frame, completion.execution_status);
        if (!in_flight_.empty())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

} // namespace framecl::ipc
