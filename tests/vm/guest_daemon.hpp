#pragma once
// What the vm suite's tests share in the guest (README.md here): vgem dma-bufs from
// libframecl's allocator, vivid's capture node, and one framecld.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "base/unique_fd.hpp"
#include "daemon_client.hpp"
#include "daemon_fixture.hpp"
#include "framecl/client.h"
#include "test_env.hpp"

namespace framecl::test {

// On the guest's emulated CPU, building programs (once, then PoCL's cache has them) and
// opening a session (PoCL compiles for the frame size) take far longer than elsewhere.
inline constexpr std::chrono::seconds guest_wait{600};
inline constexpr int guest_request_timeout_ms = 300000;

// A vgem dma-buf of at least `size` bytes, from libframecl's allocator
// (FRAMECL_BUFFERS_DRM: a dumb buffer exported with PRIME).
inline UniqueFd vgemBuffer(uint64_t size)
{
    const framecl_allocate_options options{FRAMECL_BUFFERS_DRM, nullptr};
    framecl_buffer_source used = FRAMECL_BUFFERS_AUTO;
    const int fd = framecl_allocate_buffer(&options, size, &used);
    REQUIRE_MESSAGE(fd >= 0, "framecl_allocate_buffer: " << std::string(framecl_last_error(nullptr)));
    CHECK(used == FRAMECL_BUFFERS_DRM);
    return UniqueFd(fd);
}

// vivid's video capture node: the one whose name ends in "vid-cap".
inline std::string vividCaptureNode()
{
    for (const auto& entry : std::filesystem::directory_iterator("/sys/class/video4linux")) {
        std::ifstream name_file(entry.path() / "name");
        std::string name;
        std::getline(name_file, name);
        if (name.starts_with("vivid") && name.ends_with("vid-cap"))
            return "/dev/" + entry.path().filename().string();
    }
    FAIL("no vivid capture node under /sys/class/video4linux (run-in-guest loads vivid)");
    return {};
}

// This client's entry of the daemon's stats.
inline nlohmann::json statsOf(framecl_client* client, const std::string& name)
{
    const nlohmann::json all = stats(client);
    for (const auto& entry : all["clients"])
        if (entry["name"] == name)
            return entry;
    FAIL("no client named " << name << " in stats");
    return {};
}

// The guest's framecld, one for the whole run: each start costs the emulated CPU
// seconds. Started at its first use, with the colour plugin alone, which serves every
// pipeline here (guest_daemon.cpp says how it is configured); stopped by main.cpp.
const RunningDaemon& guestDaemon();

// Stops the guest's framecld if it started: "" once it exited cleanly on SIGTERM, or
// else what went wrong, with its log. Runs after the test cases, where doctest's
// checks no longer count.
std::string stopGuestDaemon();

} // namespace framecl::test
