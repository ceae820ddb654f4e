#pragma once
// libframecl clients of an InProcessDaemon (tests/support/in_process_daemon.hpp).

#include <string>

#include <doctest/doctest.h>

#include "daemon_client.hpp"
#include "in_process_daemon.hpp"

namespace framecl::test {

// A libframecl client of `daemon`, named `name`.
inline Client connectAs(const InProcessDaemon& daemon, const char* name)
{
    const std::string socket = daemon.socket().string();
    framecl_connect_options options{socket.c_str(), name, 5000};
    Client client;
    REQUIRE_MESSAGE(framecl_connect(&options, &client.handle) == 0, framecl_last_error(nullptr));
    return client;
}

// A session of `copy` on ABGR8888 frames of `width` x `height`; its output layout in `out`.
inline uint32_t openCopy(framecl_client* client, uint32_t width, uint32_t height, framecl_frame_layout* out)
{
    uint32_t session = 0;
    REQUIRE_MESSAGE(framecl_open_session(client, "copy", DRM_FORMAT_ABGR8888, width, height, nullptr, 0, &session,
                                         out) == 0,
                    std::string(framecl_last_error(client)));
    return session;
}

} // namespace framecl::test
