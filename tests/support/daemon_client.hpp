#pragma once
// A libframecl client of a RunningDaemon, for integration tests: connecting,
// registering sealed memfds, waiting for Dones and reading the stats.

#include <string>
#include <utility>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/unique_fd.hpp"
#include "daemon_fixture.hpp"
#include "framecl/client.h"
#include "memory_fds.hpp"

namespace framecl::test {

struct Client {
    framecl_client* handle = nullptr;
    Client() = default;
    Client(Client&& other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
    ~Client() { framecl_disconnect(handle); }
    operator framecl_client*() const { return handle; }
};

inline Client connectTo(const RunningDaemon& daemon, const char* name = "ipc-test", int timeout_ms = 5000)
{
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), name, timeout_ms};
    Client client;
    const int r = framecl_connect(&options, &client.handle);
    REQUIRE_MESSAGE(r == 0, "framecl_connect: " << framecl_last_error(nullptr));
    return client;
}

inline framecl_frame_layout packed(uint32_t fourcc, uint32_t width, uint32_t height, uint64_t* size = nullptr)
{
    framecl_frame_layout layout{};
    const uint64_t bytes = framecl_packed_layout(fourcc, width, height, &layout);
    if (size)
        *size = bytes;
    return layout;
}

// Registers a sealed memfd of `layout` (`size` bytes) and returns its id; the memfd
// comes back through `fd` so the test can write and read the frame.
inline uint32_t registerMemfd(framecl_client* client, const framecl_frame_layout& layout, size_t size,
                              framecl::UniqueFd& fd)
{
    fd = sealedMemfd("ipc-test", off_t(size));
    uint32_t id = 0;
    const int r = framecl_register_buffer(client, fd.get(), &layout, &id);
    REQUIRE_MESSAGE(r == 0, "register: " << std::string(framecl_last_error(client)));
    return id;
}

inline framecl_done nextDone(framecl_client* client, int timeout_ms = 20000)
{
    framecl_done done{};
    const int r = framecl_next_done(client, timeout_ms, &done);
    REQUIRE_MESSAGE(r == 0, "next_done: " << r << " " << std::string(framecl_last_error(client)));
    return done;
}

inline nlohmann::json stats(framecl_client* client)
{
    char* text = nullptr;
    const int r = framecl_stats(client, &text);
    REQUIRE_MESSAGE(r == 0, "stats: " << std::string(framecl_last_error(client)));
    const auto json = nlohmann::json::parse(text);
    free(text);
    return json;
}

inline bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace framecl::test
