#pragma once
// What fusion (pipeline/fusion.hpp) did with one run of a session's stages, for the log
// and stats: apart from fusion.hpp so that the session's header needs no more of it.

#include <cstdint>
#include <string>

namespace framecl::pipeline {

struct FusionNote {
    uint32_t first = 0; // stage indices, from 0
    uint32_t last = 0;
    bool fused = false;
    std::string what; // the fused kernel's name, or why the stages were not fused
};

} // namespace framecl::pipeline
