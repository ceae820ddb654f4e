#pragma once
// A scripted stand-in for framecld's IPC, written from docs/protocol.md: enough of
// the protocol to drive libframecl through connect, registration, sessions, frames and
// a daemon restart, with no GPU. It checks nothing the real daemon checks (seals,
// limits, layouts against sessions); tests of those run against framecld itself
// (tests/integration).

#include "base/unique_fd.hpp"
#include "envelope.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <chrono>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace framecl::test {

struct FakeDaemonBehaviour {
    std::string hello_error{};  // non-empty: every Hello gets this ErrorReply
    // false: frames stay in flight until a TraceRequest (their Dones then come before
    // its reply) or until the daemon stops
    bool answer_submits = true;
    // What a TraceReply carries; it is sent when the request's `seconds` have passed, as
    // framecld does.
    std::string trace_json = R"({"traceEvents": [], "displayTimeUnit": "ms"})";
    std::string buffer_error{}; // non-empty: every buffer is refused with this text
    // Non-empty: every buffer-socket connection is refused at accept with this text, the
    // way framecld refuses a user daemon.allowed_users does not name.
    std::string connection_refusal{};
    // An OpenSession of "copy" is answered after this many SessionPreparing messages,
    // `preparing_interval` apart (and after it), as framecld does while it tunes.
    int preparing_steps = 0;
    std::chrono::milliseconds preparing_interval{0};
    // Every reply and Done comes after an Envelope that names its type and carries no
    // table: a malformed message, which the library must ignore.
    bool empty_messages_first = false;
};

// What one run of the fake saw, in order.
struct FakeDaemonLog {
    struct Registration {
        uint32_t id;
        uint32_t fourcc, width, height;
        ino_t inode; // of the fd that came with it
    };
    struct Parameter {
        uint32_t stage;
        std::string key;
        std::vector<double> values;
        bool operator==(const Parameter&) const = default;
    };
    struct Submitted {
        uint32_t session;
        uint32_t input_buffer, output_buffer;
        uint64_t sequence;
        std::vector<Parameter> parameters;
    };
    std::vector<std::string> hello_names;
    std::vector<std::string> register_tokens; // of every RegisterBuffers, binding ones included
    std::vector<Registration> registrations;
    struct SessionOptions {
        framecl::wire::Backpressure backpressure;
        uint32_t deadline_us;
    };
    std::vector<std::string> opened_pipelines;
    std::vector<SessionOptions> opened_options; // of every OpenSession, as opened_pipelines
    std::vector<uint32_t> opened_sessions; // the ids the fake gave
    std::vector<Submitted> submits;
    std::vector<uint32_t> trace_seconds; // of every TraceRequest
    int goodbyes = 0;
};

class FakeDaemon {
  public:
    // Listens at `directory`/framecl.sock and announces `directory`/buffers.sock.
    explicit FakeDaemon(std::filesystem::path directory);
    ~FakeDaemon();
    FakeDaemon(const FakeDaemon&) = delete;
    FakeDaemon& operator=(const FakeDaemon&) = delete;

    // Starts a new run, listening when it returns: a new token, new session ids
    // (100 × run + 1, ...), an empty log.
    void start(FakeDaemonBehaviour behaviour = {});
    // The daemon dies: both sockets close and their files go.
    void stop();

    std::string socketPath() const { return (directory_ / "framecl.sock").string(); }
    std::string token() const;
    FakeDaemonLog log() const;

  private:
    void serve(zmq::socket_t router, UniqueFd listener, FakeDaemonBehaviour behaviour,
               uint32_t first_session);

    std::filesystem::path directory_;
    // One context per run: terminating it waits until the run's socket file is gone, so
    // that the next run's file is never removed by the last run's closing.
    std::unique_ptr<zmq::context_t> context_;
    int runs_ = 0;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    mutable std::mutex mutex_;
    std::string token_;
    FakeDaemonLog log_;
};

} // namespace framecl::test
