// Why Server::watch looks for requests after every handler (review defect 12): a send
// on the ROUTER takes the edge that ZMQ_FD signalled a request with. framecld's loop
// waits on ZMQ_FD, so a request that arrived while a timer's or the GPU's handler ran
// and sent would sit unread until something else woke the loop. This checks that
// libzmq behaves so, on the transport and socket types framecld uses.
#include <doctest/doctest.h>

#include <poll.h>
#include <thread>

#include <zmq.hpp>

#include "temp_dir.hpp"

using namespace std::chrono_literals;

namespace {

bool readable(int fd, std::chrono::milliseconds timeout)
{
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, int(timeout.count())) == 1;
}

} // namespace

TEST_CASE("a send on the ROUTER takes the ZMQ_FD edge of a request that arrived before it")
{
    framecl::test::TempDir dir;
    const std::string endpoint = "ipc://" + (dir / "edge.sock").string();
    zmq::context_t context;
    zmq::socket_t router(context, zmq::socket_type::router);
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    router.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::routing_id, "client");
    router.bind(endpoint);
    dealer.connect(endpoint);

    // A first round trip, so that the connection is up on both sides.
    dealer.send(zmq::str_buffer("hello"));
    zmq::message_t identity, body;
    REQUIRE(router.recv(identity));
    REQUIRE(router.recv(body));
    router.send(identity, zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("welcome"));
    REQUIRE(dealer.recv(body));

    // Settled: ZMQ_EVENTS has taken every pending command, nothing is signalled.
    const int fd = router.get(zmq::sockopt::fd);
    std::this_thread::sleep_for(20ms); // past libzmq's throttle on command processing
    REQUIRE((router.get(zmq::sockopt::events) & ZMQ_POLLIN) == 0);
    REQUIRE_FALSE(readable(fd, 0ms));

    // A request arrives, and ZMQ_FD says so.
    dealer.send(zmq::str_buffer("request"));
    REQUIRE(readable(fd, 5000ms));

    // Before the loop looks, a handler sends (a Done, a trace).
    std::this_thread::sleep_for(20ms);
    router.send(identity, zmq::send_flags::sndmore);
    router.send(zmq::str_buffer("done"));

    // ZMQ_FD no longer says anything, yet the request is there: only asking ZMQ_EVENTS
    // after the send finds it.
    CHECK_FALSE(readable(fd, 200ms));
    CHECK((router.get(zmq::sockopt::events) & ZMQ_POLLIN) != 0);
    REQUIRE(router.recv(identity, zmq::recv_flags::dontwait));
    REQUIRE(router.recv(body, zmq::recv_flags::dontwait));
    CHECK(body.to_string() == "request");
}
