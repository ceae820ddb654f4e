// framecld against clients that misbehave, a second daemon and a short supply of file
// descriptors: each case is a way a review found to knock the daemon over or lock
// other clients out, and checks that the daemon answers with the reason and keeps
// serving everyone else.
#include <atomic>
#include <barrier>
#include <deque>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "child_process.hpp"
#include "daemon_client.hpp"
#include "daemon_fixture.hpp"
#include "raw_client.hpp"
#include "test_env.hpp"

using namespace framecl::test;
using namespace std::chrono_literals;
namespace wire = framecl::wire;

namespace {

// The error framecl_connect gives for `name`; empty if it connected.
std::string connectError(const RunningDaemon& daemon, const std::string& name)
{
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), name.c_str(), 5000};
    framecl_client* client = nullptr;
    if (framecl_connect(&options, &client) == 0) {
        framecl_disconnect(client);
        return "";
    }
    return framecl_last_error(nullptr);
}

bool alive(pid_t pid)
{
    return kill(pid, 0) == 0;
}

std::vector<std::string> clientNames(const nlohmann::json& stats)
{
    std::vector<std::string> names;
    for (const auto& client : stats["clients"])
        names.push_back(client["name"]);
    std::sort(names.begin(), names.end());
    return names;
}

// A connection to the buffer socket that sends nothing.
framecl::UniqueFd idleBufferConnection(const RunningDaemon& daemon)
{
    framecl::UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, daemon.bufferSocket().c_str(), sizeof address.sun_path - 1);
    REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    return fd;
}

// What the daemon says on a buffer connection before closing it: the refusal's text,
// "" for a close without one, nothing if it says nothing within `timeout`.
std::optional<std::string> refusalOn(int fd, std::chrono::milliseconds timeout)
{
    pollfd entry{fd, POLLIN, 0};
    if (poll(&entry, 1, int(timeout.count())) <= 0)
        return std::nullopt;
    auto packet = framecl::protocol::receivePacket(fd);
    if (!packet || packet->closed)
        return "";
    std::vector<uint8_t> aligned;
    const wire::Envelope* envelope = framecl::protocol::verifiedEnvelope(packet->bytes, aligned);
    REQUIRE(envelope);
    const auto* results = envelope->message_as_RegisterBuffersReply()->results();
    REQUIRE(results->size() == 1);
    return results->Get(0)->error()->str();
}

// User plus system CPU time of process `pid` so far.
std::chrono::milliseconds cpuTime(pid_t pid)
{
    std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    // Fields after the command name, which is in parentheses and may hold spaces.
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14)
            utime = std::stoull(field);
        if (i == 15)
            stime = std::stoull(field);
    }
    return std::chrono::milliseconds((utime + stime) * 1000 / uint64_t(sysconf(_SC_CLK_TCK)));
}

// 40 DEALER sockets saying Hello as fast as framecld answers, never binding, from a
// thread of their own until stop() or destruction.
class HelloFlood {
public:
    explicit HelloFlood(const RunningDaemon& daemon) : thread_([this, socket = daemon.socket()] { run(socket); }) {}
    ~HelloFlood() { stop(); }
    void stop()
    {
        stopping_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    uint64_t welcomes() const { return welcomes_; }

private:
    void run(const std::filesystem::path& socket_path)
    {
        zmq::context_t context;
        std::vector<zmq::socket_t> sockets;
        for (int i = 0; i < 40; ++i) {
            sockets.emplace_back(context, zmq::socket_type::dealer);
            sockets.back().set(zmq::sockopt::linger, 0);
            sockets.back().connect("ipc://" + socket_path.string());
        }
        flatbuffers::FlatBufferBuilder builder;
        const auto hello = framecl::protocol::finishEnvelope(
            builder, wire::CreateHelloDirect(builder, framecl::protocol::protocol_version, "flood"));
        while (!stopping_)
            for (auto& socket : sockets) {
                [[maybe_unused]] auto sent = socket.send(zmq::buffer(hello.data(), hello.size()), zmq::send_flags::dontwait);
                zmq::message_t reply;
                while (socket.recv(reply, zmq::recv_flags::dontwait))
                    ++welcomes_;
            }
    }

    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> welcomes_{0};
    std::thread thread_; // last: it starts once the members above exist
};

size_t openFds(pid_t pid)
{
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
        ++count;
    return count;
}

} // namespace

TEST_CASE("a client name that is not UTF-8 or too long is refused at Hello, and stats keep working for everyone")
{
    RunningDaemon daemon(luma_pipeline);
    Client good = connectTo(daemon, "good");

    CHECK(contains(connectError(daemon, "bad\xff\xfename"), "refused the connection: Hello.client_name is not UTF-8: byte 3 is 0xff"));
    CHECK(contains(connectError(daemon, std::string(1000, 'n')), "Hello.client_name is 1000 bytes long; at most 64"));
    CHECK(contains(connectError(daemon, "two\nlines"), "Hello.client_name holds the control character U+000A at byte 3"));

    // The camera of the report, as a user would run it.
    const auto camera = runToCompletion({requireEnv("FRAMECL_MOCK_CAMERA"), "--socket", daemon.socket().string(),
                                         "--name", "bad\xff\xfename", "--pipeline", "copy", "--format", "nv12", "--size", "64x48", "--fps", "30",
                                         "--frames", "3"},
                                        daemon.dir().path(), 60s);
    CHECK(camera.status.code != 0);
    CHECK(contains(camera.err, "not UTF-8"));

    // Every other string a client sends is checked as well.
    RawClient raw(daemon);
    raw.bind(raw.hello("raw"));
    flatbuffers::FlatBufferBuilder builder;
    auto input = wire::CreateFrameLayout(builder, DRM_FORMAT_ABGR8888, 8, 8);
    const auto [type, text] = raw.roundTrip(framecl::protocol::finishEnvelope(
        builder, wire::CreateOpenSession(builder, 5, builder.CreateString("lu\xc3ma"), input)));
    REQUIRE(type == wire::Message::ErrorReply);
    const auto* error = RawClient::envelopeOf(text)->message_as_ErrorReply();
    CHECK(error->request_id() == 5);
    CHECK(error->message()->str() == "OpenSession.pipeline is not UTF-8: byte 2 is 0xc3");

    const auto after = stats(good);
    CHECK(clientNames(after) == std::vector<std::string>{"good", "raw"});
    CHECK(alive(daemon.pid()));
}

TEST_CASE("a client that never reads its Dones loses them, counted, and the daemon keeps serving the others")
{
    RunningDaemon daemon(luma_pipeline);
    Client good = connectTo(daemon, "good");
    RawClient deaf(daemon);
    deaf.bind(deaf.hello("deaf"));
    // Each Submit names no session, so its Done (Failed) goes out at once; none is read.
    // More than a Unix socket queues: the daemon must drop, not wait for, the rest.
    constexpr int submits = 3000;
    flatbuffers::FlatBufferBuilder builder;
    const auto submit = framecl::protocol::finishEnvelope(builder, wire::CreateSubmit(builder, 1, 1, 2, 0));
    for (int i = 0; i < submits; ++i)
        deaf.sendFrame(submit);

    // Whether the daemon read them all yet is seen in its stats: poll until the count settles.
    uint64_t unsent = 0;
    for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;) {
        const auto now = stats(good);
        for (const auto& client : now["clients"])
            if (client["name"] == "deaf")
                unsent = client["dones_unsent"];
        if (unsent > 0)
            break;
        std::this_thread::sleep_for(50ms);
    }
    CHECK(unsent > 0);
    CHECK(unsent < uint64_t(submits));
    CHECK(contains(daemon.log(), "client 'deaf' does not read its buffer socket: its Dones are dropped"));

    // The daemon's loop never blocked on the deaf client: a frame of another goes through.
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_ABGR8888, 16, 8, &size);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(good, "luma", DRM_FORMAT_ABGR8888, 16, 8, nullptr, 0, &session, nullptr) == 0);
    framecl::UniqueFd in_fd, out_fd;
    const uint32_t in = registerMemfd(good, layout, size, in_fd);
    const uint32_t out = registerMemfd(good, packed(DRM_FORMAT_R8, 16, 8), 16 * 8, out_fd);
    REQUIRE(framecl_submit(good, session, in, out, 1) == 0);
    CHECK(nextDone(good).status == FRAMECL_FRAME_OK);
    CHECK(alive(daemon.pid()));
}

TEST_CASE("a second framecld on the same sockets refuses to start and leaves the first one serving")
{
    RunningDaemon daemon(luma_pipeline);
    std::filesystem::create_directories(daemon.dir() / "second");
    const auto second = runToCompletion({requireEnv("FRAMECL_DAEMON"), "--config", daemon.configFile().string()},
                                        daemon.dir() / "second", 60s);
    CHECK(second.status.exited);
    CHECK(second.status.code == 1);
    CHECK(contains(second.err, "another framecld is already serving"));

    CHECK(std::filesystem::exists(daemon.socket()));
    CHECK(std::filesystem::exists(daemon.bufferSocket()));
    Client client = connectTo(daemon, "after");
    CHECK(clientNames(stats(client)) == std::vector<std::string>{"after"});
}

TEST_CASE("a client that has not bound its buffer socket gets only errors, and Hellos cannot crowd out real clients")
{
    RunningDaemon daemon(luma_pipeline + "[limits]\nmax_clients = 2\n");
    RawClient outsider(daemon);
    outsider.hello("outsider");
    for (auto request : {wire::Message::StatsRequest, wire::Message::OpenSession}) {
        flatbuffers::FlatBufferBuilder builder;
        auto bytes = request == wire::Message::StatsRequest
                         ? framecl::protocol::finishEnvelope(builder, wire::CreateStatsRequest(builder, 3))
                         : framecl::protocol::finishEnvelope(
                               builder, wire::CreateOpenSession(builder, 3, builder.CreateString("luma"),
                                                                wire::CreateFrameLayout(builder, DRM_FORMAT_ABGR8888, 8, 8)));
        const auto [type, text] = outsider.roundTrip(bytes);
        REQUIRE(type == wire::Message::ErrorReply);
        CHECK(contains(text, "then bind the buffer socket with the Welcome's token"));
    }

    // More Hellos than clients may be served, none of them bound: the oldest give way.
    std::vector<std::unique_ptr<RawClient>> flood;
    for (int i = 0; i < 5; ++i) {
        flood.push_back(std::make_unique<RawClient>(daemon));
        bool welcomed = false;
        const std::string answer = flood.back()->hello("flood", &welcomed);
        CHECK_MESSAGE(welcomed, answer);
    }
    Client first = connectTo(daemon, "first");
    Client second = connectTo(daemon, "second");
    CHECK(clientNames(stats(first)) == std::vector<std::string>{"first", "second"}); // bound clients only
    CHECK(contains(connectError(daemon, "third"), "framecld serves limits.max_clients = 2 clients already"));
}

TEST_CASE("a buffer larger than max_bytes_per_client is refused by its size, before it is mapped or imported")
{
    RunningDaemon daemon(luma_pipeline + "[limits]\nmax_bytes_per_client = 1048576\n");
    Client client = connectTo(daemon);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_ABGR8888, 64, 64, &size);
    // 64 GiB, sparse: more than a CPU device can wrap in one buffer, so importing it
    // first would fail on that instead.
    framecl::UniqueFd huge = sealedMemfd("huge", off_t(64) << 30);
    uint32_t id = 0;
    REQUIRE(framecl_register_buffer(client, huge.get(), &layout, &id) != 0);
    CHECK(contains(framecl_last_error(client),
                   "68719476736 more bytes would pass limits.max_bytes_per_client = 1048576"));

    framecl::UniqueFd fits;
    registerMemfd(client, layout, size, fits);
    CHECK(stats(client)["clients"][0]["buffers"] == 1);
}

TEST_CASE("a session whose intermediates would pass max_bytes_per_client is refused before it allocates them")
{
    // Two stages: one R8 intermediate of the frame's size between them (unfused: fused,
    // the two copies would be one kernel with none).
    RunningDaemon daemon("[gpu]\ntuning = \"off\"\n[[pipeline]]\nname = \"twice\"\nfuse = false\n"
                         "stages = [ { plugin = \"copy\" }, { plugin = \"copy\" } ]\n"
                         "[limits]\nmax_bytes_per_client = 1048576\n");
    Client client = connectTo(daemon);
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "twice", DRM_FORMAT_R8, 2048, 1024, nullptr, 0, &session, nullptr) != 0);
    CHECK(contains(framecl_last_error(client), "need 2097152 bytes of device memory, over the 1048576 allowed"));

    // 512x1024: half a MiB in the session; then a buffer that would pass what is left.
    REQUIRE(framecl_open_session(client, "twice", DRM_FORMAT_R8, 512, 1024, nullptr, 0, &session, nullptr) == 0);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_R8, 768, 1024, &size);
    framecl::UniqueFd buffer = sealedMemfd("over", off_t(size));
    uint32_t id = 0;
    REQUIRE(framecl_register_buffer(client, buffer.get(), &layout, &id) != 0);
    CHECK(contains(framecl_last_error(client), "(0 held in buffers, 524288 in sessions)"));
    // Closing the session gives its bytes back.
    REQUIRE(framecl_close_session(client, session) == 0);
    REQUIRE(framecl_register_buffer(client, buffer.get(), &layout, &id) == 0);
}

TEST_CASE("idle buffer-socket connections are bounded and closed, and real clients still get in")
{
    RunningDaemon daemon(luma_pipeline + "[limits]\nmax_clients = 2\n");
    std::vector<framecl::UniqueFd> idle;
    for (int i = 0; i < 3; ++i)
        idle.push_back(idleBufferConnection(daemon));
    // The third pushed out the first, which is told why.
    const auto pushed_out = refusalOn(idle[0].get(), 10s);
    REQUIRE(pushed_out);
    CHECK(contains(*pushed_out, "sent no RegisterBuffers"));

    Client client = connectTo(daemon, "real");
    CHECK(clientNames(stats(client)) == std::vector<std::string>{"real"});

    // The others are closed once they have waited 10 s (checked every 5 s).
    for (size_t i = 1; i < idle.size(); ++i) {
        const auto closed = refusalOn(idle[i].get(), 20s);
        CHECK_MESSAGE(closed, "connection " << i << " was not closed");
    }
}

TEST_CASE("framecld raises its open-file limit to what its limits let clients hold")
{
    rlimit ours{};
    REQUIRE(getrlimit(RLIMIT_NOFILE, &ours) == 0);
    rlimit lowered = ours;
    lowered.rlim_cur = 1024; // the soft limit systemd and most shells give
    REQUIRE(setrlimit(RLIMIT_NOFILE, &lowered) == 0);
    std::optional<RunningDaemon> daemon;
    daemon.emplace(luma_pipeline); // inherits the lowered limit
    REQUIRE(setrlimit(RLIMIT_NOFILE, &ours) == 0);

    rlimit theirs{};
    REQUIRE(prlimit(daemon->pid(), RLIMIT_NOFILE, nullptr, &theirs) == 0);
    // The defaults: 16 clients x (64 buffers + 2 connections + 4 fences for each of 4
    // frames in flight) + 256 of the daemon's own.
    const rlim_t wanted = 16 * (64 + 2 + 4 * 4) + 256;
    CHECK(theirs.rlim_cur == std::min(wanted, ours.rlim_max));
}

TEST_CASE("out of file descriptors, framecld refuses buffer connections with the reason instead of spinning")
{
    RunningDaemon daemon(luma_pipeline);
    const pid_t pid = daemon.pid();
    rlimit before{};
    REQUIRE(prlimit(pid, RLIMIT_NOFILE, nullptr, &before) == 0);
    rlimit scarce = before;
    scarce.rlim_cur = openFds(pid) + 2; // room for about two more connections
    REQUIRE(prlimit(pid, RLIMIT_NOFILE, &scarce, nullptr) == 0);

    std::vector<framecl::UniqueFd> connections;
    for (int i = 0; i < 6; ++i)
        connections.push_back(idleBufferConnection(daemon));
    // Those past the limit are taken and closed, with the reason; the others wait.
    int refused = 0, waiting = 0;
    for (const auto& connection : connections) {
        const auto said = refusalOn(connection.get(), 2s);
        refused += said && contains(*said, "no file descriptor left");
        waiting += !said;
    }
    CHECK(refused >= 3);
    CHECK(refused + waiting == 6); // none closed without a word

    // The loop waits rather than spinning on a listener it cannot empty.
    const auto cpu_before = cpuTime(pid);
    std::this_thread::sleep_for(1500ms);
    CHECK(cpuTime(pid) - cpu_before < 500ms);

    connections.clear();
    REQUIRE(prlimit(pid, RLIMIT_NOFILE, &before, nullptr) == 0);
    Client client = connectTo(daemon, "after");
    uint32_t session = 0;
    CHECK(framecl_open_session(client, "luma", DRM_FORMAT_ABGR8888, 8, 8, nullptr, 0, &session, nullptr) == 0);
}

TEST_CASE("while OpenSessions tune one after another, the watchdog is still petted between them")
{
    // Each session of a new size tunes its stage for up to 2 s (gpu.tuning = auto).
    RunningDaemon daemon("[[pipeline]]\nname = \"blur\"\nstages = [ { plugin = \"box\", width = 5, height = 5 } ]\n",
                         "", {{"WATCHDOG_USEC", "1000000"}});
    constexpr int clients = 4;
    std::vector<Client> connected;
    for (int i = 0; i < clients; ++i)
        connected.push_back(connectTo(daemon, "tuner", 60000));

    using Clock = std::chrono::steady_clock;
    std::vector<Clock::time_point> opened(clients);
    std::vector<Clock::time_point> pets;
    std::atomic<bool> done{false};
    std::thread watcher([&] {
        while (!done)
            if (auto message = daemon.notify().receive(100ms); message && contains(*message, "WATCHDOG=1"))
                pets.push_back(Clock::now());
    });
    std::barrier start(clients);
    std::vector<std::thread> openers;
    std::atomic<int> failures{0};
    for (int i = 0; i < clients; ++i)
        openers.emplace_back([&, i] {
            start.arrive_and_wait();
            uint32_t session = 0;
            const uint32_t width = 1280 + 16 * uint32_t(i); // a new size: tuned anew
            if (framecl_open_session(connected[size_t(i)], "blur", DRM_FORMAT_R8, width, 720, nullptr, 0, &session,
                                     nullptr) != 0)
                ++failures;
            opened[size_t(i)] = Clock::now();
        });
    for (auto& opener : openers)
        opener.join();
    done = true;
    watcher.join();
    REQUIRE(failures == 0);

    const auto bounds = std::minmax_element(opened.begin(), opened.end());
    const auto first = bounds.first, last = bounds.second;
    const auto between = std::count_if(pets.begin(), pets.end(), [&](auto at) { return at > *first && at < *last; });
    INFO("sessions opened over " << std::chrono::duration<double>(*last - *first).count() << " s");
    CHECK(between >= 1);
}

TEST_CASE("a flood of Hellos from one process keeps no state in framecld and locks no other client out")
{
    RunningDaemon daemon(luma_pipeline);
    HelloFlood flood(daemon);
    for (auto deadline = std::chrono::steady_clock::now() + 20s;
         flood.welcomes() < 500 && std::chrono::steady_clock::now() < deadline;)
        std::this_thread::sleep_for(10ms);
    REQUIRE(flood.welcomes() >= 500);
    int connected = 0;
    std::string last_error;
    for (int i = 0; i < 10; ++i) {
        const std::string error = connectError(daemon, "real");
        connected += error.empty();
        if (!error.empty())
            last_error = error;
    }
    flood.stop();
    CHECK_MESSAGE(connected == 10, last_error);
    CHECK(alive(daemon.pid()));
    // Nothing of the flood was kept.
    Client after = connectTo(daemon, "after");
    CHECK(clientNames(stats(after)) == std::vector<std::string>{"after"});
}

TEST_CASE("limits.max_clients holds at bind: of three clients welcomed together, the third is refused there")
{
    RunningDaemon daemon(luma_pipeline + "[limits]\nmax_clients = 2\n");
    RawClient first(daemon), second(daemon), third(daemon);
    const std::string tokens[] = {first.hello("first"), second.hello("second"), third.hello("third")};
    CHECK(first.bind(tokens[0]).empty());
    CHECK(second.bind(tokens[1]).empty());
    CHECK(third.bind(tokens[2]) == "framecld serves limits.max_clients = 2 clients already");

    flatbuffers::FlatBufferBuilder builder;
    const auto [type, text] = first.roundTrip(framecl::protocol::finishEnvelope(builder, wire::CreateStatsRequest(builder, 1)));
    REQUIRE(type == wire::Message::StatsReply);
    const auto json = nlohmann::json::parse(RawClient::envelopeOf(text)->message_as_StatsReply()->json()->str());
    CHECK(clientNames(json) == std::vector<std::string>{"first", "second"});
    // The refused one is not a client: it is answered as one that never said Hello.
    flatbuffers::FlatBufferBuilder again;
    const auto [third_type, third_text] =
        third.roundTrip(framecl::protocol::finishEnvelope(again, wire::CreateStatsRequest(again, 2)));
    CHECK(third_type == wire::Message::ErrorReply);
}

TEST_CASE("connections closed for sending nothing are logged summed up, not a warning each")
{
    RunningDaemon daemon(luma_pipeline + "[limits]\nmax_clients = 2\n");
    // Each connection past the two that may wait pushes out the oldest.
    constexpr int connections = 300;
    std::deque<framecl::UniqueFd> idle;
    for (int i = 0; i < connections; ++i) {
        idle.push_back(idleBufferConnection(daemon));
        if (idle.size() > 4)
            idle.pop_front(); // long pushed out by now
    }
    const auto countLines = [&](const std::string& part) {
        std::istringstream log(daemon.log());
        size_t count = 0;
        for (std::string line; std::getline(log, line);)
            count += contains(line, part);
        return count;
    };
    // The summary comes with the next housekeeping, within 5 s.
    for (auto deadline = std::chrono::steady_clock::now() + 12s;
         countLines("more in the last 5 s") == 0 && std::chrono::steady_clock::now() < deadline;)
        std::this_thread::sleep_for(100ms);
    CHECK(countLines("closed a connection that sent no RegisterBuffers") <= 3);
    CHECK(countLines("connections closed for sending no RegisterBuffers while others waited:") >= 1);
    Client client = connectTo(daemon, "real");
    CHECK(clientNames(stats(client)) == std::vector<std::string>{"real"});
}

TEST_CASE("out of file descriptors, a RegisterBuffers is refused alone and its client keeps its buffers and session")
{
    RunningDaemon daemon(luma_pipeline);
    const pid_t pid = daemon.pid();
    Client client = connectTo(daemon, "holder");
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "luma", DRM_FORMAT_ABGR8888, 16, 8, nullptr, 0, &session, nullptr) == 0);
    uint64_t size = 0;
    const auto layout = packed(DRM_FORMAT_ABGR8888, 16, 8, &size);
    framecl::UniqueFd in_fd, out_fd;
    const uint32_t in = registerMemfd(client, layout, size, in_fd);
    const uint32_t out = registerMemfd(client, packed(DRM_FORMAT_R8, 16, 8), 16 * 8, out_fd);

    // No fd number left below the limit: the kernel cannot install a received fd.
    rlimit before{};
    REQUIRE(prlimit(pid, RLIMIT_NOFILE, nullptr, &before) == 0);
    std::set<int> used;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
        used.insert(std::stoi(entry.path().filename()));
    rlim_t lowest_free = 0;
    while (used.count(int(lowest_free)))
        ++lowest_free;
    rlimit scarce = before;
    scarce.rlim_cur = lowest_free;
    REQUIRE(prlimit(pid, RLIMIT_NOFILE, &scarce, nullptr) == 0);
    framecl::UniqueFd extra = sealedMemfd("extra", off_t(size));
    uint32_t id = 0;
    const int registered = framecl_register_buffer(client, extra.get(), &layout, &id);
    const std::string error = registered == 0 ? "" : framecl_last_error(client);
    REQUIRE(prlimit(pid, RLIMIT_NOFILE, &before, nullptr) == 0);
    CHECK(registered != 0);
    CHECK(contains(error, "no file descriptor left"));

    // Nothing else was lost: the same buffers and session carry a frame.
    const auto now = stats(client);
    CHECK(now["released_on_disconnect"]["clients"] == 0);
    CHECK(now["clients"][0]["buffers"] == 2);
    CHECK(now["clients"][0]["sessions"].size() == 1);
    REQUIRE(framecl_submit(client, session, in, out, 1) == 0);
    CHECK(nextDone(client).status == FRAMECL_FRAME_OK);
    CHECK(framecl_register_buffer(client, extra.get(), &layout, &id) == 0);
}

TEST_CASE("the sessions a client asked for are not opened once it left, and a client after it is served at once")
{
    RunningDaemon daemon("[[pipeline]]\nname = \"blur\"\nstages = [ { plugin = \"box\", width = 5, height = 5 } ]\n");
    // Clients that each ask for 8 sessions of sizes never seen (each tuned anew on the
    // GPU, for up to 2 s) and leave without waiting for them.
    constexpr int leavers = 6;
    for (int round = 0; round < leavers; ++round) {
        RawClient leaver(daemon);
        REQUIRE(leaver.bind(leaver.hello("leaver")).empty());
        for (uint32_t k = 0; k < 8; ++k) {
            flatbuffers::FlatBufferBuilder builder;
            const uint32_t width = 640 + 16 * (uint32_t(round) * 8 + k);
            leaver.send(framecl::protocol::finishEnvelope(
                builder, wire::CreateOpenSession(builder, k + 1, builder.CreateString("blur"),
                                                 wire::CreateFrameLayout(builder, DRM_FORMAT_R8, width, 480))));
        }
        // Its requests have all been read once the answer to a later one comes.
        flatbuffers::FlatBufferBuilder builder;
        const auto [type, text] =
            leaver.roundTrip(framecl::protocol::finishEnvelope(builder, wire::CreateStatsRequest(builder, 100)));
        CHECK(type == wire::Message::StatsReply);
    }
    const auto started = std::chrono::steady_clock::now();
    Client client = connectTo(daemon, "after", 60000);
    for (auto deadline = started + 10s; clientNames(stats(client)) != std::vector<std::string>{"after"};) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        std::this_thread::sleep_for(10ms);
    }
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "blur", DRM_FORMAT_R8, 320, 240, nullptr, 0, &session, nullptr) == 0);
    const auto waited = std::chrono::steady_clock::now() - started;
    INFO("opened after " << std::chrono::duration<double>(waited).count() << " s");
    // Its own tuning (up to 2 s a stage) and the end of the candidate at work, not the
    // 2 s of each of the 48 left behind.
    CHECK(waited < 20s);
    CHECK(contains(daemon.log(), "cancelled"));
}

TEST_CASE("SIGTERM while a session tunes stops framecld within the GPU work in flight")
{
    // A tuning that would take every candidate's time (a minute at most) had framecld
    // waited for it.
    RunningDaemon daemon("[gpu]\ntuning_budget_ms = 60000\n"
                         "[[pipeline]]\nname = \"smooth\"\nstages = [ { plugin = \"meanshift\" } ]\n");
    RawClient client(daemon);
    REQUIRE(client.bind(client.hello("tuning")).empty());
    flatbuffers::FlatBufferBuilder builder;
    client.send(framecl::protocol::finishEnvelope(
        builder, wire::CreateOpenSession(builder, 1, builder.CreateString("smooth"),
                                         wire::CreateFrameLayout(builder, DRM_FORMAT_ABGR8888, 1280, 720))));
    // Tuning has begun once the status says so.
    for (;;) {
        const auto [type, text] = client.receiveAny();
        if (type == wire::Message::SessionPreparing && contains(text, "tuning"))
            break;
    }
    const auto stopping = std::chrono::steady_clock::now();
    REQUIRE(kill(daemon.pid(), SIGTERM) == 0);
    const auto status = daemon.waitForExit(60s);
    const auto took = std::chrono::steady_clock::now() - stopping;
    REQUIRE(status);
    CHECK(status->exited);
    CHECK(status->code == 0);
    INFO("stopped in " << std::chrono::duration<double>(took).count() << " s");
    CHECK(took < 5s); // a tuning frame, the drain, the exit
}

// The kernel binaries in PoCL's cache under `dir`, by path.
std::set<std::string> poclKernels(const std::filesystem::path& dir)
{
    std::set<std::string> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
        if (entry.path().extension() == ".so")
            found.insert(entry.path().string());
    return found;
}

TEST_CASE("on PoCL a tuning's kernels are compiled by a helper process first: framecld's own launches compile none")
{
    // PoCL compiles a kernel for each new work-group size at its first launch while
    // every other launch in the process waits (pipeline/compile_ahead.hpp): its default,
    // which the tests' environment turns off elsewhere (tests/meson.build).
    TempDir pocl_cache;
    const std::map<std::string, std::string> env = {{"POCL_CACHE_DIR", pocl_cache.path().string()},
                                                    {"POCL_WORK_GROUP_SPECIALIZATION", "1"}};
    // The built-in copy alone: with PoCL's cache empty every plugin's kernels would be
    // built from source at start, a minute on a busy machine.
    RunningDaemon daemon("[gpu]\ntuning_budget_ms = 60000\n", "plugin_dirs = []\n", env);
    const auto openCopy = [&](uint32_t width) {
        RawClient client(daemon);
        REQUIRE(client.bind(client.hello("tuning")).empty());
        flatbuffers::FlatBufferBuilder builder;
        const auto reply = client.roundTrip(framecl::protocol::finishEnvelope(
            builder, wire::CreateOpenSession(builder, 1, builder.CreateString("copy"),
                                             wire::CreateFrameLayout(builder, DRM_FORMAT_NV12, width, 48))));
        REQUIRE_MESSAGE(reply.first == wire::Message::SessionOpened, reply.second);
    };
    // What framecld's helper compiles, run by hand: every candidate of copy at 64x48.
    const auto before = poclKernels(pocl_cache.path());
    const RunResult helper = runToCompletion({requireEnv("FRAMECL_DAEMON"), "--config", daemon.configFile().string(),
                                              "--compile-ahead", "copy", "--stage", "1", "--frame",
                                              std::to_string(DRM_FORMAT_NV12), "64", "48"},
                                             daemon.dir().path(), 120s, env);
    REQUIRE_MESSAGE((helper.status.exited && helper.status.code == 0), helper.err);
    const auto compiled = poclKernels(pocl_cache.path());
    CHECK(compiled.size() > before.size());
    // framecld tunes copy there (its own helper finds everything built), calibrates and
    // records its session: nothing new to compile.
    openCopy(64);
    CHECK(poclKernels(pocl_cache.path()) == compiled);
    // A size never seen: framecld's helper compiles its kernels, and the tuner says so.
    openCopy(96);
    const std::string log = daemon.log();
    const size_t tuned = log.find("tuned stage 1 (copy) on NV12 96x48:");
    REQUIRE(tuned != std::string::npos);
    const std::string line = log.substr(tuned, log.find('\n', tuned) - tuned);
    CHECK_MESSAGE(contains(line, "of 8 candidates in"), line);
    CHECK_MESSAGE(contains(line, "each compiled ahead by a helper"), line);
}

TEST_CASE("a released buffer and a closed session count against max_bytes_per_client until their frames end")
{
    // blockmatch on a 1280x720 frame: long enough on PoCL to act while it runs.
    const std::string pipelines = "[gpu]\ntuning = \"off\"\n[[pipeline]]\nname = \"slow\"\n"
                                  "stages = [ { plugin = \"blockmatch\", block = 8, range = 8 } ]\n";
    RunningDaemon daemon(pipelines);
    Client client = connectTo(daemon);
    framecl_frame_layout out_layout{};
    uint32_t session = 0;
    REQUIRE(framecl_open_session(client, "slow", DRM_FORMAT_R8, 1280, 720, nullptr, 0, &session, &out_layout) == 0);
    uint64_t in_size = 0;
    const auto in_layout = packed(DRM_FORMAT_R8, 1280, 720, &in_size);
    framecl::UniqueFd a_fd, out_fd;
    const uint32_t a = registerMemfd(client, in_layout, in_size, a_fd);
    const uint32_t out = registerMemfd(client, out_layout, framecl_layout_end(&out_layout), out_fd);
    const auto held = [&] {
        const auto now = stats(client)["clients"][0];
        return std::pair{now["bytes"].get<uint64_t>(), now["session_bytes"].get<uint64_t>()};
    };
    const auto [buffer_bytes, session_bytes] = held();
    REQUIRE(session_bytes > 0);
    // Room for what it holds and a little more, not for a second input.
    daemon.reconfigure(pipelines + fmt::format("[limits]\nmax_bytes_per_client = {}\n",
                                               buffer_bytes + session_bytes + in_size / 2));
    daemon.reload();

    framecl::UniqueFd b_fd = sealedMemfd("b", off_t(in_size));
    uint32_t b = 0;
    // The Submit goes on the buffer socket, the release on the ZeroMQ socket: the daemon
    // may read them in either order, so the release waits until the frame is in flight.
    const auto submitted = [&](uint64_t sequence) {
        REQUIRE(framecl_submit(client, session, sequence == 1 ? a : b, out, sequence) == 0);
        for (auto deadline = std::chrono::steady_clock::now() + 10s;
             stats(client)["clients"][0]["sessions"][0]["frames_in_flight"] != 1;) {
            REQUIRE(std::chrono::steady_clock::now() < deadline);
            std::this_thread::sleep_for(1ms);
        }
    };
    submitted(1);
    REQUIRE(framecl_release_buffer(client, a) == 0);

    CHECK(framecl_register_buffer(client, b_fd.get(), &in_layout, &b) != 0); // the frame still holds `a`
    CHECK(contains(framecl_last_error(client), "would pass limits.max_bytes_per_client"));
    CHECK(nextDone(client).status == FRAMECL_FRAME_OK);
    REQUIRE(framecl_register_buffer(client, b_fd.get(), &in_layout, &b) == 0); // `a` is given back

    submitted(2);
    REQUIRE(framecl_close_session(client, session) == 0);
    CHECK(held().second == session_bytes); // the frame still runs in the session
    CHECK(nextDone(client).status == FRAMECL_FRAME_OK);
    CHECK(held().second == 0);
}
