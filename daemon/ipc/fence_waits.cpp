// Frames waiting for fences (docs/architecture.md, "Fences"): before a frame's first
// part goes to the GPU, the fences on its buffers (implicit sync) and the acquire fence
// its Submit carried (explicit sync) must have signalled. No thread waits: each pending
// fence is a sync_file the loop watches, and the client's frames are handed to the
// scheduler in the order they came once those at the front are clear.
// Buffer order: a frame also waits while an earlier frame of its client, at the
// scheduler, writes its input or uses its output, so that a client can chain frames
// (one's output the next one's input) without waiting for each Done. The scheduler
// may run a client's frames side by side on two lanes, and their copies to and from
// host memory with them: nothing else orders them.
#include <algorithm>

#include <sys/socket.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "base/monotonic_clock.hpp"
#include "envelope.hpp"
#include "fd_passing.hpp"
#include "ipc/server.hpp"
#include "memory/sync_file.hpp"

namespace framecl::ipc {

namespace {

// What an earlier frame of the client, still at the scheduler, does to this frame's
// buffers that the frame must wait for; empty: nothing.
std::string earlierUse(const ClientState& client, const scheduler::Frame& frame)
{
    const auto use = [&](const memory::ImportedBuffer* buffer) {
        const auto found = client.buffers_in_use.find(buffer);
        return found == client.buffers_in_use.end() ? BufferUse{} : found->second;
    };
    if (use(frame.input.get()).writes > 0)
        return "an earlier frame of the client that writes its input";
    if (const BufferUse output = use(frame.output.get()); output.reads > 0 || output.writes > 0)
        return "an earlier frame of the client that uses its output";
    return {};
}

} // namespace

Result<std::shared_ptr<UniqueFd>> Server::receiveAcquireFence(const wire::Submit& submit, std::vector<UniqueFd>& fds,
                                                              const std::string& fds_lost)
{
    if (!submit.acquire_fence()) {
        if (!fds.empty() || !fds_lost.empty())
            return fail("the Submit carries an fd but no acquire_fence: only an acquire fence travels with a Submit");
        return nullptr;
    }
    if (!fds_lost.empty())
        return fail("the Submit's acquire fence did not arrive: " + fds_lost);
    if (fds.size() != 1)
        return fail(fmt::format("Submit.acquire_fence is set: its packet carries one fd, not {}", fds.size()));
    if (auto state = memory::syncFileState(fds.front().get()); !state)
        return fail("the Submit's acquire fence is " + state.error().message);
    return std::make_shared<UniqueFd>(std::move(fds.front()));
}

void Server::queueFrame(ClientState& client, SessionState& state, scheduler::Frame frame, const HeldSubmit& submit)
{
    ++client.in_flight;
    ++state.in_flight;
    std::string failure = submit.release_fence ? sendReleaseFence(client, frame) : std::string();
    FencedFrame fenced{std::move(frame), {}, std::move(failure), UINT64_MAX};
    const auto add = [&](UniqueFd sync_file, std::string what) {
        const auto fence = memory::syncFileState(sync_file.get());
        if (!fence)
            fenced.failure = fmt::format("{}: {}", what, fence.error().message);
        else if (fence->kind == memory::FenceState::Kind::Failed)
            fenced.failure = fmt::format("{} signalled an error ({}): the frame did not run", what, fence->error);
        else if (fence->kind == memory::FenceState::Kind::Pending)
            fenced.fences.push_back({std::move(sync_file), std::move(what)});
    };
    if (submit.acquire_fence && fenced.failure.empty())
        add(std::move(*submit.acquire_fence), "the Submit's acquire fence");
    // Implicit sync: what already uses the dma-bufs — the input's writers; the output's
    // readers and writers.
    for (const auto& [buffer, write, what] :
         {std::tuple{fenced.frame.input.get(), false, "the fences of the input's writers"},
          std::tuple{fenced.frame.output.get(), true, "the fences of the output's readers and writers"}}) {
        if (buffer->kind() != memory::FdKind::DmaBuf || !implicit_sync_off_.empty() || !fenced.failure.empty())
            continue;
        auto sync_file = memory::exportDmaBufFences(buffer->fd(), write);
        if (sync_file && *sync_file) {
            add(std::move(**sync_file), what);
        } else if (sync_file) {
            turnImplicitSyncOff("the kernel has no DMA_BUF_IOCTL_EXPORT_SYNC_FILE");
        } else {
            fenced.failure = fmt::format("{}: {}", what, sync_file.error().message);
        }
    }

    if (fenced.failure.empty() && fenced.fences.empty() && client.fenced.empty() &&
        earlierUse(client, fenced.frame).empty()) {
        toScheduler(client, std::move(fenced.frame));
        return;
    }
    if (!fenced.fences.empty()) {
        ++client.fence_waits;
        fenced.give_up_ns = fenced.frame.queued_ns + uint64_t(config_.limits.max_fence_wait_ms) * 1'000'000;
    }
    if (fenced.frame.deadline_ns)
        fenced.give_up_ns = std::min(fenced.give_up_ns, fenced.frame.deadline_ns);
    const uint64_t client_id = client.id;
    for (const PendingFence& fence : fenced.fences)
        watch(fence.sync_file.get(),
              [this, client_id, fd = fence.sync_file.get()] { onFenceReadable(client_id, fd); });
    client.fenced.push_back(std::move(fenced));
    ++fenced_frames_;
    releaseFencedFrames(client);
}

std::string Server::sendReleaseFence(ClientState& client, scheduler::Frame& frame)
{
    if (!release_fences_)
        return "no release fence: " + release_fences_off_;
    auto fence = release_fences_->create();
    if (!fence)
        return "no release fence: " + fence.error().message;
    frame.release_gate = std::move(fence->gate);
    flatbuffers::FlatBufferBuilder builder;
    const auto bytes =
        protocol::finishEnvelope(builder, wire::CreateFrameAccepted(builder, frame.session_id, frame.sequence));
    const int fd = fence->sync_file.get();
    // Never waits, as a Done does not (sendDone): a client that does not read loses it.
    if (protocol::sendPacketOnce(client.buffer_connection.get(), bytes, {&fd, 1}, MSG_DONTWAIT) != 0)
        ++client.dones_unsent;
    return {};
}

void Server::turnImplicitSyncOff(std::string why)
{
    implicit_sync_off_ = std::move(why);
    log::get("ipc")->warn("implicit sync off: {}; a dma-buf's fences are waited for only where the runtime maps it, "
                          "by DMA_BUF_IOCTL_SYNC, which blocks framecld until they signal (docs/architecture.md, "
                          "\"Fences\")",
                          implicit_sync_off_);
}

void Server::onFenceReadable(uint64_t client_id, int fd)
{
    loop_.unwatch(fd); // readable: signalled, with or without an error
    if (ClientState* client = clientById(client_id)) {
        releaseFencedFrames(*client);
        feed();
    }
}

void Server::releaseFencedFrames(ClientState& client)
{
    for (FencedFrame& fenced : client.fenced)
        std::erase_if(fenced.fences, [&](PendingFence& fence) {
            const auto state = memory::syncFileState(fence.sync_file.get());
            if (state && state->kind == memory::FenceState::Kind::Pending)
                return false;
            if (state && state->kind == memory::FenceState::Kind::Failed && fenced.failure.empty())
                fenced.failure = fmt::format("{} signalled an error ({}): the frame did not run", fence.what,
                                             state->error);
            loop_.unwatch(fence.sync_file.get());
            return true;
        });
    // A frame whose fences have all signalled may still wait for earlier frames; from
    // now on only its deadline bounds that (theirs bound them).
    for (FencedFrame& fenced : client.fenced)
        if (fenced.fences.empty())
            fenced.give_up_ns = fenced.frame.deadline_ns ? fenced.frame.deadline_ns : UINT64_MAX;
    // A frame that will not run ends now, wherever it waits; the rest go in order.
    for (auto it = client.fenced.begin(); it != client.fenced.end();) {
        if (it->failure.empty()) {
            ++it;
            continue;
        }
        FencedFrame ended = std::move(*it);
        it = client.fenced.erase(it);
        endFencedFrame(client, ended, wire::FrameStatus::Failed, ended.failure);
    }
    handOverFencedFrames(client);
}

void Server::handOverFencedFrames(ClientState& client)
{
    while (!client.fenced.empty() && client.fenced.front().fences.empty()) {
        FencedFrame& front = client.fenced.front();
        if (!earlierUse(client, front.frame).empty()) {
            if (!front.waited_for_buffers)
                ++client.buffer_waits;
            front.waited_for_buffers = true;
            return;
        }
        leaveFenceQueue(front);
        toScheduler(client, std::move(front.frame));
        client.fenced.pop_front();
    }
}

void Server::toScheduler(ClientState& client, scheduler::Frame frame)
{
    ++client.buffers_in_use[frame.input.get()].reads;
    ++client.buffers_in_use[frame.output.get()].writes;
    scheduler_.submit(std::move(frame));
}

void Server::endBufferUse(ClientState& client, const scheduler::Frame& frame)
{
    for (const auto& [buffer, write] : {std::pair{frame.input.get(), false}, std::pair{frame.output.get(), true}}) {
        const auto found = client.buffers_in_use.find(buffer);
        if (found == client.buffers_in_use.end())
            continue;
        --(write ? found->second.writes : found->second.reads);
        if (found->second.reads == 0 && found->second.writes == 0)
            client.buffers_in_use.erase(found);
    }
}

void Server::expireFencedFrames(uint64_t now_ns)
{
    if (fenced_frames_ == 0)
        return;
    for (auto& [token, client] : clients_) {
        for (auto it = client.fenced.begin(); it != client.fenced.end();) {
            if (it->give_up_ns > now_ns) {
                ++it;
                continue;
            }
            FencedFrame ended = std::move(*it);
            it = client.fenced.erase(it);
            std::string waiting_for = ended.fences.empty() ? earlierUse(client, ended.frame) : ended.fences.front().what;
            if (waiting_for.empty())
                waiting_for = "an earlier frame's fences";
            if (ended.frame.deadline_ns && ended.give_up_ns == ended.frame.deadline_ns)
                endFencedFrame(client, ended, wire::FrameStatus::Dropped,
                               fmt::format("not started by its deadline: still waiting for {}", waiting_for));
            else
                endFencedFrame(client, ended, wire::FrameStatus::Failed,
                               fmt::format("{} did not signal within limits.max_fence_wait_ms = {} ms", waiting_for,
                                           config_.limits.max_fence_wait_ms));
        }
        releaseFencedFrames(client);
    }
}

std::optional<uint64_t> Server::nextFenceGiveUpNs() const
{
    if (fenced_frames_ == 0)
        return std::nullopt;
    uint64_t earliest = UINT64_MAX;
    for (const auto& [token, client] : clients_)
        for (const FencedFrame& fenced : client.fenced)
            earliest = std::min(earliest, fenced.give_up_ns);
    return earliest == UINT64_MAX ? std::nullopt : std::optional(earliest);
}

void Server::endFencedFrame(ClientState& client, FencedFrame& fenced, wire::FrameStatus status,
                            const std::string& error)
{
    leaveFenceQueue(fenced);
    const scheduler::Frame& frame = fenced.frame;
    --client.in_flight;
    if (auto state = client.sessions.find(frame.session_id); state != client.sessions.end()) {
        --state->second.in_flight;
        ++(status == wire::FrameStatus::Dropped ? state->second.counters.dropped : state->second.counters.failed);
    }
    scheduler_.skipped(client.id, frame.session_id, frame.arrival);
    sendDone(client, frame.session_id, frame.sequence, {status, error, frame.queued_ns, 0, monotonicNs(), {}});
}

void Server::leaveFenceQueue(FencedFrame& fenced)
{
    for (const PendingFence& fence : fenced.fences)
        loop_.unwatch(fence.sync_file.get());
    fenced.fences.clear();
    --fenced_frames_;
}

void Server::endEveryFencedFrame(ClientState& client, wire::FrameStatus status, const std::string& error,
                                 std::optional<uint32_t> session_id)
{
    for (auto it = client.fenced.begin(); it != client.fenced.end();) {
        if (session_id && it->frame.session_id != *session_id) {
            ++it;
            continue;
        }
        FencedFrame ended = std::move(*it);
        it = client.fenced.erase(it);
        endFencedFrame(client, ended, status, error);
    }
}

} // namespace framecl::ipc
