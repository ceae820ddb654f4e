#pragma once
// What the fuzz harnesses share: a framecld Server in this process on the OpenCL
// device (PoCL in CI), and a client of it that speaks the wire protocol by hand
// (docs/protocol.md). What must never happen — no reply, a reply that does not verify,
// an answer that breaks the protocol — aborts with why, which libFuzzer reports as a
// crash with the input that caused it.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "base/unique_fd.hpp"
#include "envelope.hpp"
#include "in_process_daemon.hpp"

namespace framecl::fuzz {

[[noreturn]] inline void fail(const std::string& what)
{
    std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
    std::abort();
}

// The daemon every input of a harness goes to, started at the first: the config's
// pipelines (`extra_toml`) on the default device, without tuning, so that an
// OpenSession costs milliseconds.
test::InProcessDaemon& daemon(const std::string& extra_toml = "");

// A client that said Hello and bound its buffer socket.
class Client {
public:
    explicit Client(const test::InProcessDaemon& daemon);

    // Sends `bytes` as one message on the ZeroMQ socket.
    void send(std::span<const uint8_t> bytes);
    // A StatsRequest, and the messages until its answer: true for the StatsReply, false
    // for "unknown client: ..." (the daemon forgot the client: a Goodbye, or its buffer
    // socket closed). Fails when neither comes within 10 s.
    bool answersStats();
    // Reads messages on the ZeroMQ socket until the reply to `request_id`: its bytes.
    std::vector<uint8_t> replyTo(uint32_t request_id);

    // The bound buffer socket (SOCK_SEQPACKET), and the token it was bound with.
    int bufferSocket() const { return buffer_socket_.get(); }
    const std::string& token() const { return token_; }
    // The packet that answers the one just sent on the buffer socket; nothing when
    // framecld closed the connection instead (and forgot the client). Every packet gets
    // one or the other (docs/protocol.md); fails when neither comes within 10 s.
    std::optional<std::vector<uint8_t>> bufferReply();

    uint32_t nextRequestId() { return ++request_id_; }

private:
    zmq::context_t context_;
    zmq::socket_t dealer_{context_, zmq::socket_type::dealer};
    UniqueFd buffer_socket_;
    std::string token_;
    uint32_t request_id_ = 0;
};

// A memfd of `size` bytes with `seals` (F_SEAL_SHRINK | F_SEAL_SEAL is what a
// well-behaved client sends).
UniqueFd memfd(uint64_t size, int seals);

// The envelope in `bytes`, verified (a copy is kept in `storage` where they are
// unaligned); fails when they do not verify.
const wire::Envelope& verified(std::span<const uint8_t> bytes, std::vector<uint8_t>& storage);

} // namespace framecl::fuzz
