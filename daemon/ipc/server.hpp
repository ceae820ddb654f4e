#pragma once
// framecld's side of docs/protocol.md: the ZeroMQ ROUTER, the buffer socket, the
// clients, their buffers and sessions, and frames from Submit to Done, which on their
// way to the GPU and back are the scheduler's (scheduler/frame_scheduler.hpp).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "config/config.hpp"
#include "framecl_generated.h"
#include "gpu/context.hpp"
#include "gpu/release_fences.hpp"
#include "gpu/replay.hpp"
#include "ipc/client_state.hpp"
#include "ipc/event_tally.hpp"
#include "ipc/peer_access.hpp"
#include "ipc/socket_files.hpp"
#include "ipc/welcome_token.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/session_preparer.hpp"
#include "pipeline/tuner.hpp"
#include "scheduler/chrome_trace.hpp"
#include "scheduler/frame_scheduler.hpp"
#include "service/service_loop.hpp"
#include "service/socket_activation.hpp"

namespace framecl::ipc {

// How often silent clients and unbound buffer connections are looked for.
inline constexpr auto housekeeping_period = std::chrono::seconds(5);
// A Welcome's token binds a buffer socket for this long after the Hello.
inline constexpr auto token_lifetime = std::chrono::seconds(30);
// How often a client waiting for its session to be opened hears the status again: well
// within libframecl's default 5 s wait, whatever one tuning candidate takes.
inline constexpr uint64_t preparing_status_period_ns = 1'000'000'000;

class Server {
public:
    // Binds both sockets and registers them with `loop`. Fails (with the reason) if
    // a socket cannot be bound, e.g. because another framecld serves the path. A
    // socket in `activated` is used as it is: the service manager made it, set its
    // access and keeps its file. `framecld`, where given, is the program the tuner runs
    // to compile kernels ahead on a device that needs it (pipeline/compile_ahead.hpp).
    static Result<std::unique_ptr<Server>> start(const config::Config& config, const gpu::GpuContext& gpu,
                                                 pipeline::Catalog catalog, service::ServiceLoop& loop,
                                                 service::ActivatedSockets activated = {},
                                                 std::filesystem::path framecld = {});
    ~Server(); // unbinds and removes the socket files it made

    // New pipelines, limits and allowed peers for what comes next; open sessions keep
    // the pipelines (and plugins) they were opened with. Socket paths change only at
    // restart.
    Result<void> reload(const config::Config& config, pipeline::Catalog catalog);

    // Waits for every frame in flight and sends its Done: SIGTERM drains, it does not
    // drop. Bounded by `timeout`.
    void drain(std::chrono::milliseconds timeout);

    // The pipelines offered now.
    const pipeline::Catalog& catalog() const { return catalog_; }
    // How sessions replay their dispatches on this device (gpu.recording, resolved).
    gpu::RecordingMode recording() const { return recording_; }

private:
    struct Refusal {
        wire::FrameStatus status;
        std::string error;
    };
    // A `framecl trace` window: answered when it closes.
    struct OpenTrace {
        std::string identity;
        uint32_t request_id;
        std::chrono::steady_clock::time_point ends;
        scheduler::TraceWindow window;
    };
    struct DoneFields {
        wire::FrameStatus status;
        std::string error;
        uint64_t queued_ns = 0, start_ns = 0, end_ns = 0;
        std::vector<std::pair<std::string, uint64_t>> stages;
        uint64_t gpu_end_ns = 0, callback_ns = 0; // for frames that ran
        const framecl_statistics* statistics = nullptr; // a frame that ran, where its pipeline makes them
    };
    struct ReleasedOnDisconnect {
        uint64_t clients = 0, buffers = 0, sessions = 0;
    };

    Server(const config::Config& config, const gpu::GpuContext& gpu, pipeline::Catalog catalog,
           service::ServiceLoop& loop, PeerAccess access, WelcomeTokens tokens, std::filesystem::path framecld);
    Result<void> bind(service::ActivatedSockets activated);
    Result<void> adoptSocketFile(const std::filesystem::path& path);
    // The tuner as gpu.tuning, gpu.tuning_budget_ms, gpu.kernel_budget_ms and
    // daemon.cache_dir ask, kept across reloads that change none of them.
    void setUpTuner();

    // Has the loop call `handler` when `fd` is readable, then look for requests.
    void watch(int fd, std::function<void()> handler);
    // The ZeroMQ socket: pending messages, each handled in turn, a bounded number per
    // turn of the loop.
    void drainMessages();
    void handleMessage(const std::string& identity, std::span<const uint8_t> bytes);
    void send(const std::string& identity, std::span<const uint8_t> bytes);
    void sendError(const std::string& identity, uint32_t request_id, const std::string& message);
    void sendAck(const std::string& identity, uint32_t request_id);

    void onHello(const std::string& identity, const wire::Hello& hello);
    void onOpenSession(ClientState& client, const wire::OpenSession& request);
    // Sessions the preparer has opened (or refused): each to its client, with its reply;
    // and the pieces of their GPU work, each to its client's fair queue.
    void onSessionsPrepared();
    void queueOpeningWork(std::shared_ptr<pipeline::PendingTurn> work);
    // Each session being opened: its status to its client again, about once a second,
    // so that its wait for the reply starts again while the preparer is at work.
    void sendPreparingStatuses();
    struct OpeningSession;
    void openedSession(ClientState& client, const OpeningSession& opening, std::unique_ptr<pipeline::Session> session);
    void onCloseSession(ClientState& client, const wire::CloseSession& request);
    void onReleaseBuffers(ClientState& client, const wire::ReleaseBuffers& request);
    void onStats(ClientState& client, const wire::StatsRequest& request);
    void onTrace(ClientState& client, const wire::TraceRequest& request);
    // `fds`, `fds_lost`: what the Submit's packet carried (protocol::Packet).
    void onSubmit(ClientState& client, const wire::Submit& submit, std::vector<UniqueFd>& fds,
                  const std::string& fds_lost);
    void sendDone(ClientState& client, uint32_t session, uint64_t sequence, const DoneFields& done);

    // Frames (frames.cpp): a Submit checked and handed to the scheduler, held, or
    // refused at once; its Done when the scheduler says it ended.
    tl::expected<scheduler::Frame, Refusal> acceptFrame(ClientState& client, const HeldSubmit& submit);
    void applyBackpressure(ClientState& client, SessionState& state, const HeldSubmit& submit,
                           scheduler::Frame frame);
    // Fences (fence_waits.cpp). A frame accepted takes a slot and goes to the scheduler
    // once the fences it must wait for have signalled — its Submit's acquire fence and
    // those on its dma-bufs — and the client's earlier frames that use its buffers have
    // ended. No thread waits: the loop watches each pending sync_file.
    // Applies the Submit's parameter changes to its session's current values (the frame's
    // from now on: docs/protocol.md, "Parameters per frame") and gives `fields` the
    // values it runs with; a Submit for no session is left to acceptFrame.
    Result<void> takeParameters(ClientState& client, const wire::Submit& submit, HeldSubmit& fields);
    Result<std::shared_ptr<UniqueFd>> receiveAcquireFence(const wire::Submit& submit, std::vector<UniqueFd>& fds,
                                                          const std::string& fds_lost);
    // `submit`: its acquire fence, and whether it asked for a release fence, which
    // FrameAccepted then brings at once.
    void queueFrame(ClientState& client, SessionState& state, scheduler::Frame frame, const HeldSubmit& submit);
    // The frame's release fence made and sent; why not, where it could not be.
    std::string sendReleaseFence(ClientState& client, scheduler::Frame& frame);
    void onFenceReadable(uint64_t client_id, int fd);
    // Says why at warning level, once: dma-bufs' fences are not exported from now on.
    void turnImplicitSyncOff(std::string why);
    // Ends the frames whose fences failed, then hands those at the front that wait for
    // nothing to the scheduler.
    void releaseFencedFrames(ClientState& client);
    // Hands the frames at the front that wait for nothing to the scheduler.
    void handOverFencedFrames(ClientState& client);
    // To the scheduler, its buffers counted in use until it ends (endBufferUse).
    void toScheduler(ClientState& client, scheduler::Frame frame);
    void endBufferUse(ClientState& client, const scheduler::Frame& frame);
    // Frames past their deadline or limits.max_fence_wait_ms end Dropped or Failed.
    void expireFencedFrames(uint64_t now_ns);
    std::optional<uint64_t> nextFenceGiveUpNs() const;
    // A frame out of the fence queue without running: Done with `status`.
    void endFencedFrame(ClientState& client, FencedFrame& fenced, wire::FrameStatus status, const std::string& error);
    // Each of the client's waiting frames (of `session_id` only, where given) so ended.
    void endEveryFencedFrame(ClientState& client, wire::FrameStatus status, const std::string& error,
                             std::optional<uint32_t> session_id = std::nullopt);
    // A frame leaves the fence queue: the loop stops watching its fences.
    void leaveFenceQueue(FencedFrame& fenced);
    void admitHeld(ClientState& client);
    // Every client's held Submits into the slots that frames ending freed, then the GPU fed.
    void feed();
    void frameEnded(const scheduler::FrameEnd& end);
    // The GPU is lost: held Submits fail too, and the loop stops for framecld to exit
    // with EX_UNAVAILABLE, which the service manager restarts (docs/architecture.md, "A
    // failed frame and a lost GPU").
    void gpuLost(const std::string& reason);
    void onSchedulerTimer();
    void armSchedulerTimer();
    // The [[client_class]] of a client by its name and, once known, its uid and gid.
    // Also its lane and priority rank: those of its class's gpu_priority.
    void assignClass(ClientState& client);

    // The buffer socket.
    void acceptBufferConnection();
    // Out of fds: takes one connection with the spare fd and closes it with the reason.
    // False when there was no spare to give up, or no connection to take.
    bool shedBufferConnection();
    // RLIMIT_NOFILE raised to what the limits allow clients to hold (a warning if the
    // hard limit is lower).
    void raiseFileLimit();
    void onBufferPacket(int fd);
    // `fds_lost`: why the packet's fds did not all arrive (protocol::Packet), which
    // refuses every buffer in it; empty when they did.
    void registerBuffers(ClientState& client, const wire::RegisterBuffers& request, std::vector<UniqueFd>& fds,
                         const std::string& fds_lost, flatbuffers::FlatBufferBuilder& reply);
    void refuseBufferConnection(int fd, const std::string& reason);
    // The first RegisterBuffers on connection `fd`: the client its token names, bound
    // to the connection and counted from now on; null (the connection refused and
    // closed) where the token is not good or limits.max_clients are served already.
    ClientState* bindClient(int fd, std::string_view token);
    void closeBufferConnection(int fd);

    void onCompletions();
    void traceFrame(const ClientState& client, const scheduler::FrameEnd& end);
    void housekeeping();
    void dropClient(const std::string& token, bool disconnected);

    // Gives back the bytes of the client's released buffers and closed sessions that no
    // frame holds any more.
    static void retireUnused(ClientState& client);

    ClientState* clientByIdentity(const std::string& identity);
    ClientState* clientByToken(const std::string& token);
    ClientState* clientByConnection(int fd);
    ClientState* clientById(uint64_t id);
    std::string statsJson() const;

    config::Config config_;
    const gpu::GpuContext& gpu_;
    service::ServiceLoop& loop_;
    PeerAccess access_;
    WelcomeTokens tokens_;
    // The tokens clients bound with, until they expire: each binds once.
    std::map<std::string, std::chrono::steady_clock::time_point> spent_tokens_;
    EventTally unauthenticated_events_; // what anyone reaching a socket can cause, logged summed up
    pipeline::Catalog catalog_;
    gpu::RecordingMode recording_;
    std::shared_ptr<pipeline::Tuner> tuner_; // null with gpu.tuning = off; shared with sessions being opened
    std::filesystem::path framecld_;          // for the tuner's compiling ahead; empty: none
    std::filesystem::path tuner_cache_dir_;
    uint32_t tuner_budget_ms_ = 0;
    double tuner_kernel_budget_ms_ = 0;

    zmq::context_t zmq_context_;
    zmq::socket_t router_;
    UniqueFd buffer_listener_;
    std::vector<BoundSocketFile> bound_sockets_; // the socket files this process made
    struct UnboundConnection {
        UniqueFd connection;
        std::chrono::steady_clock::time_point accepted;
    };
    std::map<int, UnboundConnection> unbound_connections_; // accepted, before their first RegisterBuffers
    UniqueFd spare_fd_;            // given up to refuse a connection when no fd is left
    uint64_t connections_shed_ = 0; // refused for want of an fd
    bool listener_paused_ = false;  // out of fds with no spare: not watched until housekeeping
    UniqueFd housekeeping_timer_;
    UniqueFd scheduler_timer_; // deadlines, the idle perf hint, trace windows
    std::optional<uint64_t> scheduler_timer_at_; // as last armed (UINT64_MAX: disarmed); none: unknown
    UniqueFd more_messages_;   // written when drainMessages left requests for the next turn

    std::map<std::string, ClientState> clients_; // bound to their buffer socket, by token
    std::vector<uint8_t> aligned_message_; // a received message copied to be read aligned (protocol::verifiedEnvelope)
    // An OpenSession whose session is being opened off the loop, by ticket.
    struct OpeningSession {
        std::string token;
        uid_t uid; // its client's user
        uint32_t request_id;
        std::string pipeline;
        wire::Backpressure backpressure;
        uint32_t deadline_us;
        std::string status = "waiting for the sessions asked for before it"; // repeated every second
    };
    std::map<uint64_t, OpeningSession> opening_;
    uint64_t next_status_ns_ = 0; // when the statuses of sessions being opened go out again; 0: none is
    uint64_t next_ticket_ = 1;
    pipeline::SessionPreparer preparer_; // after what its sessions use; its thread stops first
    scheduler::FrameScheduler scheduler_;
    uint64_t next_arrival_ = 1;
    size_t fenced_frames_ = 0;       // in every client's fence queue
    std::string implicit_sync_off_;  // why dma-bufs' fences are not waited for; empty: they are
    std::unique_ptr<gpu::ReleaseFences> release_fences_; // null where the device cannot make them:
    std::string release_fences_off_;                     // why
    uint64_t next_client_id_ = 1;
    std::vector<OpenTrace> traces_;
    ReleasedOnDisconnect released_;
    std::chrono::steady_clock::time_point started_;
};

} // namespace framecl::ipc
