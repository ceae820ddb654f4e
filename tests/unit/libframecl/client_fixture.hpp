#pragma once
// A fake daemon in a temporary directory, a client connected to it, and frame buffers
// as a camera would have them (sealed memfds).

#include "base/unique_fd.hpp"
#include "fake_daemon.hpp"
#include "framecl/client.h"
#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace framecl::test {

// The client's timeout in these tests: long enough for a loaded machine, short
// enough for the tests that wait it out.
inline constexpr int client_timeout_ms = 1500;

inline UniqueFd frameBuffer(const framecl_frame_layout& layout)
{
    UniqueFd fd(memfd_create("libframecl-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    REQUIRE(fd.valid());
    REQUIRE(ftruncate(fd.get(), off_t(framecl_layout_end(&layout))) == 0);
    REQUIRE(fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK) == 0);
    return fd;
}

inline framecl_frame_layout r8Layout(uint32_t width, uint32_t height)
{
    framecl_frame_layout layout;
    REQUIRE(framecl_packed_layout(DRM_FORMAT_R8, width, height, &layout) != 0);
    return layout;
}

struct ConnectedClient {
    explicit ConnectedClient(FakeDaemonBehaviour behaviour = {})
    {
        daemon.start(std::move(behaviour));
        const std::string path = daemon.socketPath();
        const framecl_connect_options options{path.c_str(), "libframecl-test", client_timeout_ms};
        REQUIRE_MESSAGE(framecl_connect(&options, &client) == 0, framecl_last_error(nullptr));
    }
    ~ConnectedClient() { framecl_disconnect(client); }

    // Registers a fresh buffer of `layout`; returns its id.
    uint32_t registerBuffer(const framecl_frame_layout& layout)
    {
        const UniqueFd fd = frameBuffer(layout);
        uint32_t id = 0;
        REQUIRE_MESSAGE(framecl_register_buffer(client, fd.get(), &layout, &id) == 0,
                        framecl_last_error(client));
        return id;
    }

    uint32_t openCopySession(uint32_t width, uint32_t height)
    {
        uint32_t session = 0;
        REQUIRE_MESSAGE(framecl_open_session(client, "copy", DRM_FORMAT_R8, width, height, nullptr,
                                             0, &session, nullptr) == 0,
                        framecl_last_error(client));
        return session;
    }

    TempDir dir;
    FakeDaemon daemon{dir.path()};
    framecl_client* client = nullptr;
};

} // namespace framecl::test
