#pragma once
// The state behind a framecl_client handle: the connection to the daemon, and what
// the application registered and opened, kept so that all of it can be restored
// under the same ids when the daemon restarts (docs/protocol.md, "When a side dies").

#include "base/unique_fd.hpp"
#include "daemon_connection.hpp"
#include "deadline.hpp"
#include "failure.hpp"
#include "framecl/client.h"
#include "wire_messages.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

struct framecl_client {
    // Connects to the daemon at `socket_path` (one try, bounded by `timeout`).
    static framecl::clientlib::Outcome<std::unique_ptr<framecl_client>>
    connect(std::string socket_path, std::string client_name, std::chrono::milliseconds timeout);
    // Says Goodbye; closes every socket and the kept fds.
    ~framecl_client();

    framecl_client(const framecl_client&) = delete;
    framecl_client& operator=(const framecl_client&) = delete;

    // Records the failure for framecl_last_error() and returns it as a negative errno.
    int fail(const framecl::clientlib::Failure& failure);
    const std::string& lastError() const { return last_error_; }
    void setStatusCallback(framecl_status_callback callback, void* user_data)
    {
        status_callback_ = callback;
        status_user_data_ = user_data;
    }

    int pollFd() const { return poll_fd_.get(); }
    // As the last Welcome said; refreshed at every reconnection.
    const framecl::clientlib::DaemonInfo& daemon() const { return daemon_; }

    int registerBuffer(int fd, const framecl_frame_layout& layout, uint32_t* id);
    int releaseBuffer(uint32_t id);
    int openSession(framecl::clientlib::SessionRequest request, uint32_t* session,
                    framecl_frame_layout* output);
    int closeSession(uint32_t session);
    // `acquire_fence`: a sync_file sent with the Submit; -1: none. `release_fence`: asks
    // for one and waits for it (-1 there where the frame was refused at once).
    // `parameters`: changes for this frame on (framecl_submit_with_parameters()).
    int submit(uint32_t session, uint32_t input_buffer, uint32_t output_buffer, uint64_t sequence,
               int acquire_fence = -1, int* release_fence = nullptr,
               std::span<const framecl_frame_parameter> parameters = {});
    int nextDone(int timeout_ms, framecl_done* done);
    // Those of the done nextDone() returned last, if its frame brought any.
    const std::optional<framecl_statistics>& doneStatistics() const { return done_statistics_; }
    int stats(std::string* json);
    // `seconds` is 1 to 60, checked by the caller.
    int trace(uint32_t seconds, std::string* json);

  private:
    struct Buffer {
        framecl::UniqueFd fd; // the library's duplicate, to register again after a restart
        framecl_frame_layout layout;
    };
    struct Session {
        framecl::clientlib::SessionRequest request;
        // The daemon's id for it; empty while the current daemon has refused to open it
        // again after a restart, with `reopen_error` saying why.
        std::optional<uint32_t> daemon_id;
        std::string reopen_error;
        // The latest values its submits changed, by stage and key: sent again with the
        // first submit after the session is opened again, as a new daemon knows none.
        std::map<std::pair<uint32_t, std::string>, std::vector<double>> parameters;
        bool parameters_to_resend = false;
    };
    struct OpenedSession {
        uint32_t daemon_id;
        framecl_frame_layout output;
    };
    struct FrameInFlight {
        uint32_t session; // the application's id
        uint32_t daemon_session;
        uint64_t sequence;
    };

    framecl_client(std::string socket_path, std::string client_name,
                   std::chrono::milliseconds timeout);

    using Connection = framecl::clientlib::DaemonConnection;
    using Reply = std::vector<uint8_t>; // the bytes of a verified Envelope

    // A new connection with every buffer registered again and every session opened
    // again, or why there is none.
    framecl::clientlib::Outcome<std::unique_ptr<Connection>>
    establish(framecl::clientlib::Deadline deadline);
    framecl::clientlib::Outcome<void> restoreBuffers(Connection& connection,
                                                     framecl::clientlib::Deadline deadline);
    framecl::clientlib::Outcome<void> restoreSessions(Connection& connection,
                                                      framecl::clientlib::Deadline deadline);
    void install(std::unique_ptr<Connection> connection);
    // Registers `buffers` (with their fds, in order) and returns the daemon's reply.
    framecl::clientlib::Outcome<Reply>
    registerOnDaemon(Connection& connection,
                     std::span<const framecl::clientlib::BufferRegistration> buffers,
                     std::span<const int> fds, framecl::clientlib::Deadline deadline);
    framecl::clientlib::Outcome<OpenedSession>
    openOnDaemon(Connection& connection, const framecl::clientlib::SessionRequest& request,
                 framecl::clientlib::Deadline deadline);

    // Reads what the daemon sent; notices its loss.
    void checkConnection();
    // Frames in flight become lost Dones; the connection is dropped; the reconnection
    // window opens.
    void noticeLoss();
    // A connection, reconnecting if there is none; 0 or a negative errno.
    int ensureConnected();
    int reconnect();
    // Runs `operation` on the connection; if the daemon turns out to be gone, reconnects
    // and runs it once more. 0 or a negative errno.
    template <typename Operation> int withDaemon(Operation&& operation);

    // Sends a request and waits for the reply with its request_id: an ErrorReply for it
    // becomes a Failure (EINVAL) with the daemon's text.
    framecl::clientlib::Outcome<Reply> request(Connection& connection,
                                               std::span<const uint8_t> envelope,
                                               uint32_t request_id,
                                               framecl::clientlib::Deadline deadline);
    uint32_t nextRequestId();
    // Which message a caller waits for, besides the Dones every drain queues.
    using Awaited = std::function<bool(const framecl::wire::Envelope&)>;
    // Reads every message both sockets hold (which re-arms ZeroMQ's edge-triggered
    // fd). Dones are queued, SessionPreparing goes to the status callback and is noted
    // in `preparing_request_`; the first message `awaited` (may be empty) accepts is
    // returned.
    std::optional<Reply> drainMessages(Connection& connection, const Awaited& awaited);
    void queueDone(const framecl::wire::Done& done);
    void notePreparing(const framecl::wire::SessionPreparing& preparing);
    // Keeps the pending-dones eventfd readable exactly while dones are queued.
    void updatePending();

    framecl::clientlib::Deadline requestDeadline() const
    {
        return framecl::clientlib::Deadline::after(timeout_);
    }
    std::string notRunning(const std::string& reason) const;
    framecl::clientlib::Outcome<void> awaitReleaseFence(Connection& connection,
                                                        uint32_t daemon_session, uint64_t sequence,
                                                        int* fd);
    void noteReleaseFence(const framecl::wire::FrameAccepted& accepted,
                          std::vector<framecl::UniqueFd>& fds);

    const std::string socket_path_;
    const std::string client_name_;
    const std::chrono::milliseconds timeout_;

    zmq::context_t context_; // before the connection: its socket must close first
    std::unique_ptr<Connection> connection_;
    framecl::clientlib::DaemonInfo daemon_;
    // When the daemon was lost plus the timeout: until then, a call that needs the daemon
    // keeps trying to reach it again; after that, each such call tries once.
    framecl::clientlib::Clock::time_point retry_until_{};

    framecl::UniqueFd poll_fd_; // the epoll fd of framecl_fd()
    framecl::UniqueFd pending_; // an eventfd in it, readable while dones are queued
    bool pending_signalled_ = false;

    std::map<uint32_t, Buffer> buffers_;
    std::map<uint32_t, Session> sessions_;
    std::deque<FrameInFlight> in_flight_; // in submission order
    struct QueuedDone {
        framecl_done done;
        std::optional<framecl_statistics> statistics;
    };
    std::deque<QueuedDone> dones_;
    std::optional<framecl_statistics> done_statistics_;
    // The frame (daemon session, sequence) whose release fence a submit waits for, and
    // the fence once it came.
    std::optional<std::pair<uint32_t, uint64_t>> awaited_fence_;
    framecl::UniqueFd release_fence_;
    uint32_t next_buffer_id_ = 1;
    uint32_t next_session_id_ = 1;
    uint32_t next_request_id_ = 1;
    // The request a SessionPreparing last named, since request() looked: its wait starts
    // again. 0: none.
    uint32_t preparing_request_ = 0;
    std::string last_status_; // the last SessionPreparing status handed to the callback
    framecl_status_callback status_callback_ = nullptr;
    void* status_user_data_ = nullptr;

    std::string last_error_;
};
