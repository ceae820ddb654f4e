#pragma once
// The filter checks of framecld --self-test: for each shipped filter plugin, small
// frames through a pipeline of it, and what its CPU reference (daemon/reference, written
// from docs/filters.md) says the output is. The self-test runs each case once per
// variant the plugin offers, on the configured device.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace framecl::selftest {

// A frame tightly packed as framecl_packed_layout packs its format.
using PackedFrame = std::vector<uint8_t>;

struct FilterCase {
    std::string plugin; // the plugin checked: "box"
    std::string what;   // its parameters in a few words: "5x7 window, reflect101 border"
    // The pipeline's stages as a TOML array's items, one inline table each:
    // `{ plugin = "box", width = 5, height = 7, border = "reflect101" }`. The stage of
    // `plugin` is the one whose variants are run; it sets no `variant` (the self-test
    // adds each in turn).
    std::string stages;
    uint32_t varied_stage = 0; // the index in `stages` of the plugin's stage
    uint32_t fourcc = 0;       // the input's DRM fourcc
    uint32_t width = 0;
    uint32_t height = 0;
    // The input frames, run in order through one session (a filter with state, such
    // as blockmatch, sees the ones before); fixed seeds, so each run checks the same.
    std::function<std::vector<PackedFrame>()> frames;
    // The output of the last frame that the reference computes from the frames.
    std::function<PackedFrame(const std::vector<PackedFrame>& frames)> reference;
    // The most any output byte may differ from the reference's (docs/filters.md says
    // where a filter rounds within 1 of an exact result).
    int tolerance = 0;
};

// One case or more per shipped filter plugin, in docs/filters.md's order.
std::vector<FilterCase> filterCases();

} // namespace framecl::selftest
