#pragma once
// One connection to one running framecld: the ZeroMQ DEALER that carries requests and
// replies, and the buffer socket that carries fds and frames, Submit and Done
// (docs/protocol.md, "A client's life"). A daemon restart ends a connection; the
// client then opens a new one (framecl_client.hpp).

#include "base/unique_fd.hpp"
#include "deadline.hpp"
#include "failure.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <zmq.hpp>

namespace framecl::clientlib {

struct PipelineInfo {
    std::string name;
    std::vector<std::string> stages;
    std::string recording;
    std::vector<std::string> tuned;
    std::vector<std::string> fusion;
};

// What Welcome told about the daemon.
struct DaemonInfo {
    std::string token;
    std::string daemon_version;
    std::string device;
    std::string buffer_socket;
    std::vector<PipelineInfo> pipelines;
    bool release_fences = false; // a Submit may ask for one
};

// A message from the daemon, not verified, with the fds its packet carried.
struct Received {
    std::vector<uint8_t> bytes;
    std::vector<UniqueFd> fds;
};

class DaemonConnection {
  public:
    // Checks that something listens at `socket_path`, says Hello, waits for Welcome,
    // connects the buffer socket Welcome names and binds it with the token. Fails at
    // once when there is no socket or nobody listens on it; else waits up to
    // `deadline`. `timeout_ms` only words the error.
    static Outcome<std::unique_ptr<DaemonConnection>> open(zmq::context_t& context,
                                                           const std::string& socket_path,
                                                           const std::string& client_name,
                                                           Deadline deadline, int timeout_ms);

    DaemonConnection(const DaemonConnection&) = delete;
    DaemonConnection& operator=(const DaemonConnection&) = delete;

    const DaemonInfo& daemon() const { return daemon_; }
    // ZMQ_FD: readable when the ZeroMQ socket's state may have changed. Edge-triggered:
    // it signals again only after receive() has returned nothing.
    int messageFd() const { return message_fd_; }
    int bufferSocket() const { return buffer_socket_.get(); }

    // Queues one Envelope on the ZeroMQ socket without waiting.
    Outcome<void> send(std::span<const uint8_t> envelope);
    // Sends a Submit on the buffer socket without waiting.
    Outcome<void> sendFrame(std::span<const uint8_t> envelope, std::span<const int> fds = {});
    // Sends RegisterBuffers (one fd per registration, in order) on the buffer socket.
    Outcome<void> sendRegistration(std::span<const uint8_t> envelope, std::span<const int> fds,
                                   Deadline deadline);

    // The next message from the daemon, or nothing when neither socket holds one: a
    // packet of the buffer socket (a Done, a RegisterBuffersReply) first, else the
    // next whole message of the ZeroMQ socket (its last frame: a ROUTER peer may put
    // an empty delimiter first). Not verified.
    std::optional<Received> receive();

    // False once the daemon has closed the buffer socket, which it does only by going
    // away; packets it sent before may still be there for receive(). Does not wait.
    bool alive();
    // Waits until either socket may need attention, or the deadline.
    void wait(Deadline deadline) const;

    // Tells the daemon to forget this client at once (Goodbye needs no reply).
    void sayGoodbye();
    // For a daemon that is gone: what is still queued is dropped at close, not
    // lingered over.
    void abandon();

  private:
    DaemonConnection(zmq::context_t& context, const std::string& endpoint);
    Outcome<DaemonInfo> hello(const std::string& socket_path, const std::string& client_name,
                              Deadline deadline, int timeout_ms);
    Outcome<void> connectBufferSocket(Deadline deadline);
    // The reply to the binding RegisterBuffers, its Envelope bytes verified. No frame
    // can be in flight yet, so nothing else arrives before it.
    Outcome<std::vector<uint8_t>> receiveBindingReply(Deadline deadline);

    zmq::socket_t messages_;
    int message_fd_ = -1;
    UniqueFd buffer_socket_;
    bool buffer_socket_closed_ = false; // read to its end: the daemon closed it
    DaemonInfo daemon_;
};

} // namespace framecl::clientlib
