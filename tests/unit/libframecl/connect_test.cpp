// framecl_connect() against what can stand where a daemon should be: nothing, a
// stale socket file, a ZeroMQ ROUTER that never answers, one that refuses Hello.

#include "base/unique_fd.hpp"
#include "fake_daemon.hpp"
#include "framecl/client.h"
#include "framecl/client.hpp"
#include "temp_dir.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <doctest/doctest.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <zmq.hpp>

using framecl::test::TempDir;

namespace {

using Clock = std::chrono::steady_clock;

// Margin for a loaded CI machine: the bounds below say "did not wait for the timeout"
// or "gave up after the timeout", not how fast anything is.
constexpr auto timeout_margin = std::chrono::milliseconds(2000);

int connectTo(const std::string& path, int timeout_ms, framecl_client** client)
{
    const framecl_connect_options options{path.c_str(), "libframecl-test", timeout_ms};
    return framecl_connect(&options, client);
}

bool contains(const char* text, const std::string& part)
{
    return text && std::string(text).find(part) != std::string::npos;
}

} // namespace

TEST_CASE("connecting where there is no socket fails at once with ENOENT, naming the path")
{
    TempDir dir;
    const std::string path = (dir / "framecl.sock").string();
    framecl_client* client = nullptr;
    const auto start = Clock::now();
    CHECK(connectTo(path, 10000, &client) == -ENOENT);
    CHECK(Clock::now() - start < timeout_margin);
    CHECK(client == nullptr);
    CHECK(contains(framecl_last_error(nullptr), "no framecld socket at " + path));
}

TEST_CASE("a tcp:// endpoint is refused: framecl connects to ipc:// paths only")
{
    framecl_client* client = nullptr;
    CHECK(connectTo("tcp://127.0.0.1:5555", 1000, &client) == -EINVAL);
    CHECK(client == nullptr);
    CHECK(contains(framecl_last_error(nullptr), "framecl connects to ipc:// paths only"));
}

TEST_CASE("$FRAMECL_SOCKET names the socket when the options do not")
{
    TempDir dir;
    const std::string path = (dir / "from-environment.sock").string();
    setenv("FRAMECL_SOCKET", path.c_str(), 1);
    framecl_client* client = nullptr;
    const int result = framecl_connect(nullptr, &client);
    unsetenv("FRAMECL_SOCKET");
    CHECK(result == -ENOENT);
    CHECK(contains(framecl_last_error(nullptr), path));
}

TEST_CASE("a socket file nobody listens on fails at once with ECONNREFUSED")
{
    // What a daemon that crashed leaves behind: the file of a socket nobody accepts on.
    TempDir dir;
    const std::string path = (dir / "framecl.sock").string();
    framecl::UniqueFd stale(socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof address.sun_path - 1);
    REQUIRE(bind(stale.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);

    framecl_client* client = nullptr;
    const auto start = Clock::now();
    CHECK(connectTo(path, 10000, &client) == -ECONNREFUSED);
    CHECK(Clock::now() - start < timeout_margin);
    CHECK(contains(framecl_last_error(nullptr), "nothing listens at " + path));
}

TEST_CASE("a daemon that never answers Hello makes connect fail with ETIMEDOUT after the timeout")
{
    TempDir dir;
    const std::string path = (dir / "framecl.sock").string();
    zmq::context_t context;
    zmq::socket_t silent(context, zmq::socket_type::router);
    silent.set(zmq::sockopt::linger, 0);
    silent.bind("ipc://" + path);

    constexpr auto timeout = std::chrono::milliseconds(300);
    framecl_client* client = nullptr;
    const auto start = Clock::now();
    CHECK(connectTo(path, int(timeout.count()), &client) == -ETIMEDOUT);
    const auto waited = Clock::now() - start;
    CHECK(waited >= timeout);
    CHECK(waited < timeout + timeout_margin);
    CHECK(client == nullptr);
    CHECK(contains(framecl_last_error(nullptr),
                   "no answer from framecld at " + path + " within 300 ms"));
}

TEST_CASE("a daemon that refuses Hello makes connect fail with its reason")
{
    TempDir dir;
    framecl::test::FakeDaemon daemon(dir.path());
    daemon.start({.hello_error = "protocol version 7 is not served; framecld speaks 1"});

    framecl_client* client = nullptr;
    CHECK(connectTo(daemon.socketPath(), 2000, &client) == -ECONNREFUSED);
    CHECK(client == nullptr);
    CHECK(contains(framecl_last_error(nullptr),
                   "protocol version 7 is not served; framecld speaks 1"));
    CHECK(daemon.log().hello_names == std::vector<std::string>{"libframecl-test"});
}

TEST_CASE("a daemon that refuses the buffer socket makes connect fail with its reason")
{
    TempDir dir;
    framecl::test::FakeDaemon daemon(dir.path());
    daemon.start({.connection_refusal = "refused: uid 1000 is not in daemon.allowed_users"});

    framecl_client* client = nullptr;
    CHECK(connectTo(daemon.socketPath(), 2000, &client) == -ECONNREFUSED);
    CHECK(client == nullptr);
    CHECK(
        contains(framecl_last_error(nullptr), "refused: uid 1000 is not in daemon.allowed_users"));
}

TEST_CASE("framecl_last_error(NULL) holds this thread's last connect failure")
{
    framecl_client* client = nullptr;
    connectTo("/nonexistent/framecl.sock", 1000, &client);
    connectTo("tcp://127.0.0.1:1", 1000, &client);
    CHECK(contains(framecl_last_error(nullptr), "tcp://127.0.0.1:1"));

    std::string other_thread;
    std::thread([&] { other_thread = framecl_last_error(nullptr); }).join();
    CHECK(other_thread.empty());
}

TEST_CASE("NULL clients are refused, and framecl_disconnect(NULL) does nothing")
{
    framecl_disconnect(nullptr);
    framecl_done done;
    CHECK(framecl_connect(nullptr, nullptr) == -EINVAL);
    CHECK(framecl_fd(nullptr) == -EINVAL);
    CHECK(framecl_submit(nullptr, 1, 1, 2, 0) == -EINVAL);
    CHECK(framecl_next_done(nullptr, 0, &done) == -EINVAL);
    CHECK(framecl_device(nullptr) == nullptr);
    CHECK(framecl_pipeline_count(nullptr) == 0);
    CHECK(framecl_pipeline_name(nullptr, 0) == nullptr);
}

TEST_CASE("the C++ Client throws ClientError with the errno and the library's text")
{
    TempDir dir;
    const std::string path = (dir / "framecl.sock").string();
    try {
        framecl::Client::connect({.socket_path = path});
        FAIL("connect did not throw");
    } catch (const framecl::ClientError& error) {
        CHECK(error.error() == ENOENT);
        CHECK(contains(error.what(), path));
    }
}
