#pragma once
// What framecl-bench measures: each filter with the parameters the targets
// name, as one-stage [[pipeline]] tables, a few whole pipelines, and the frame sizes it
// runs them at.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace framecl::bench {

struct FrameSize {
    uint32_t width;
    uint32_t height;
};

// A filter that compares each frame with the session's previous one (blockmatch) would,
// on StageTimer's one input every frame, match a frame with itself. Its case runs on two
// frames in turn instead: A, the bench's usual random input, and B, A moved by (dx, dy)
// (B(x, y) = A(x - dx, y - dy), replicated at the sides), so that every frame searches
// against a different previous frame with the same work, and B's output gives the motion
// (pair_timer.hpp checks it).
struct Motion {
    int32_t dx;
    int32_t dy;
    uint32_t block; // the side of the filter's blocks, one output pixel each
};

// A stage after a case's first, in a case that times a whole pipeline.
struct NextStage {
    std::string plugin;
    std::string parameters; // TOML inline-table entries, as BenchCase::parameters
};

struct BenchCase {
    std::string name;   // "epsilon r4 t20": the filter and what sets it apart
    std::string plugin; // as --filters selects it (a pipeline case: its first stage's)
    uint32_t fourcc;    // of the input frames
    // The stage's parameters as TOML inline-table entries, for frames of `size`
    // (bicubic's output size follows the input's).
    std::string (*parameters)(const FrameSize& size);
    // Sizes run besides --sizes: mean shift's target is set at 2560x2560.
    std::vector<FrameSize> extra_sizes;
    // Set: the case runs on a moving pair of frames (Motion). ("{}": the cases that stop
    // before it pass -Wextra.)
    std::optional<Motion> motion{};
    // Set: the case times the whole pipeline of its first stage and these, run when
    // --filters selects every plugin of it.
    std::vector<NextStage> then{};
};

// Every case, in the order the tables list them.
const std::vector<BenchCase>& benchCases();

// "1920x1080" → {1920, 1080}; false for anything else.
bool parseSize(const std::string& text, FrameSize& size);

} // namespace framecl::bench
