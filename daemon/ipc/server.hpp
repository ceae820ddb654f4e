#pragma once
// framecld's side of docs/protocol.md: the ZeroMQ ROUTER, the buffer socket, the
// clients, their buffers and sessions, and frames from Submit to Done.

#include <chrono>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
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
#include "gpu/replay.hpp"
#include "ipc/client_state.hpp"
#include "ipc/completion_queue.hpp"
#include "ipc/event_tally.hpp"
#include "ipc/peer_access.hpp"
#include "ipc/socket_files.hpp"
#include "ipc/welcome_token.hpp"
#include "pipeline/catalog.hpp"
#include "pipeline/client_frame.hpp"
#include "pipeline/session_preparer.hpp"
#include "pipeline/tuner.hpp"
#include "scheduler/chrome_trace.hpp"
#include "scheduler/fair_queue.hpp"
#include "scheduler/perf_hint_switch.hpp"
#include "scheduler/work_ahead.hpp"
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
    // A frame accepted and waiting for the GPU in its client's queue.
    struct PendingFrame {
        uint64_t serial;
        std::string token; // the client, if it still exists when the frame ends
        uint32_t session_id;
        uint64_t sequence;
        std::shared_ptr<pipeline::Session> session;
        std::shared_ptr<memory::ImportedBuffer> input;
        std::shared_ptr<memory::ImportedBuffer> output;
        uint64_t queued_ns;
        uint64_t arrival;     // HeldSubmit::arrival
        uint64_t deadline_ns; // CLOCK_MONOTONIC by which it must start; 0: none
        // Its first part is on the GPU: it stays at the front of its client's queue, and
        // in in_flight_, until its last part is.
        bool started = false;
        // The frame before it (in the order Submits arrived) did not run: the session's
        // state is zeroed before its first part.
        bool reset_state = false;
        // Not a frame: a piece of the GPU work of a session this client asked for, being
        // opened (pipeline/gpu_turns.hpp), which runs when the client's turn comes.
        std::shared_ptr<pipeline::PendingTurn> opening_work{};
    };
    struct InFlightFrame {
        PendingFrame pending;
        uint64_t client_id;
        pipeline::ClientFrame frame;
        uint64_t start_ns;        // its first part enqueued
        uint64_t last_part_ns = 0; // its last part enqueued, or its end enqueued when abandoned
        uint64_t gpu_ns = 0;      // its parts' measured GPU time, summed as they end
        // Why its parts stopped going to the GPU (one failed to enqueue): it ends Failed
        // once what it enqueued has run.
        std::string failure;
    };
    // WorkAhead::Part::part of an abandoned frame's end, and of a piece of a session's
    // opening (no frame).
    static constexpr size_t abandoned_part = SIZE_MAX;
    static constexpr size_t opening_part = SIZE_MAX - 1;
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
    void onSubmit(ClientState& client, const wire::Submit& submit);
    void sendDone(ClientState& client, uint32_t session, uint64_t sequence, const DoneFields& done);

    // The scheduler (frames.cpp): every client's frames wait in the fair queue of its
    // priority rank, and go to the GPU a part at a time while the work that runs before
    // theirs is predicted to end within the lead (scheduler::feedLeadNs), so another client's frame
    // that comes waits for about that and one part.
    tl::expected<PendingFrame, Refusal> acceptFrame(ClientState& client, const HeldSubmit& submit);
    void applyBackpressure(ClientState& client, SessionState& state, const HeldSubmit& submit, PendingFrame frame);
    void queueFrame(ClientState& client, SessionState& state, PendingFrame frame);
    void admitHeld(ClientState& client);
    void schedule();
    // The predicted time of the next part of `client_id`'s front frame; 0: unknown.
    uint64_t nextPartNs(uint64_t client_id);
    // Puts the next part of `client_id`'s front frame on the GPU, starting the frame
    // first if it is new; pops it from the fair queue once it is all there.
    void enqueueNextPart(uint64_t client_id);
    // The same where the front is a piece of a session's opening: its thread enqueues
    // it now.
    void runOpeningWork(uint64_t client_id);
    // A started frame whose next part failed to enqueue: ends Failed with `error` once
    // what it enqueued has run (at once if nothing was).
    void abandonFrame(InFlightFrame& frame, const std::string& error);
    // Watches `event`, on lane `lane`, the end of part `part` of in-flight frame `serial`
    // of client `client_id`.
    void watchPart(uint64_t serial, uint64_t client_id, size_t part, uint32_t lane, const cl::Event& event,
                   uint64_t predicted_ns, uint64_t enqueued_ns, bool last);
    void expireWaitingFrames(uint64_t now_ns);
    // The frame at `arrival` of the session did not run (refused, busy, dropped, failed):
    // the session's next frame after it, waiting or still to come, begins with its state
    // zeroed, unless it began already.
    void frameSkipped(const std::string& token, uint32_t session_id, uint64_t arrival);
    // Done for a frame that never reached the GPU, with its client's counts.
    void endWaitingFrame(const PendingFrame& frame, wire::FrameStatus status, const std::string& error);
    void onSchedulerTimer();
    void armSchedulerTimer();
    // The [[client_class]] of a client by its name and, once known, its uid and gid.
    // Also its lane and fair queue: those of its class's gpu_priority.
    void assignClass(ClientState& client);
    // The fair queue that holds the client (fair_queues_).
    scheduler::FairQueue<PendingFrame>& fairQueueOf(uint64_t client_id);
    const scheduler::FairQueue<PendingFrame>& fairQueueOf(uint64_t client_id) const;

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
    // After a frame failed on the GPU (gpu_loss.cpp): a probe tells a frame that failed
    // alone from a lost device. Lost, every frame ends Failed with the reason and the
    // loop stops for framecld to exit with EX_UNAVAILABLE, which the service manager
    // restarts (docs/architecture.md, "A failed frame and a lost GPU").
    void checkGpuAfterFailure();
    void failEveryFrame(const std::string& reason);
    void completePart(const Completion& completion);
    void completeFrame(InFlightFrame frame, cl_int status, uint64_t callback_ns);
    void traceFrame(const ClientState& client, const InFlightFrame& frame);
    void housekeeping();
    void dropClient(const std::string& token, bool disconnected);

    // Gives back the bytes of the client's released buffers and closed sessions that no
    // frame holds any more.
    static void retireUnused(ClientState& client);

    ClientState* clientByIdentity(const std::string& identity);
    ClientState* clientByToken(const std::string& token);
    ClientState* clientByConnection(int fd);
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
    CompletionQueue completions_;
    // One per priority rank (gpu::GpuContext::laneRank), each client in the one of its
    // lane: a rank's clients go to the GPU only while no client of a rank before it
    // may, as the GPU runs a higher-priority queue's work first.
    std::vector<scheduler::FairQueue<PendingFrame>> fair_queues_;
    std::map<uint64_t, InFlightFrame> in_flight_; // started, by serial
    scheduler::WorkAhead work_ahead_; // the parts on the GPU, as the scheduler predicts them
    uint64_t feed_at_ns_ = 0; // when the work ahead will have shrunk under the lead; 0: no frame waits
    bool gpu_failed_ = false; // a frame failed on the GPU since the last probe
    std::chrono::steady_clock::time_point gpu_probe_passed_{}; // when a probe last found the device working
    std::string gpu_lost_;    // why the device is lost; empty while it is not
    uint64_t next_frame_serial_ = 1;
    uint64_t next_arrival_ = 1;
    uint64_t next_client_id_ = 1;
    scheduler::PerfHintSwitch perf_hint_;
    std::vector<OpenTrace> traces_;
    ReleasedOnDisconnect released_;
    std::chrono::steady_clock::time_point started_;
};

} // namespace framecl::ipc
