#pragma once
// What framecl-bench measures: each filter with the parameters the targets
// name, as one-stage [[pipeline]] tables, and the frame sizes it runs them at.

#include <cstdint>
#include <string>
#include <vector>

namespace framecl::bench {

struct FrameSize {
    uint32_t width;
    uint32_t height;
};

struct BenchCase {
    std::string name;   // "epsilon r4 t20": the filter and what sets it apart
    std::string plugin; // as --filters selects it
    uint32_t fourcc;    // of the input frames
    // The stage's parameters as TOML inline-table entries, for frames of `size`
    // (bicubic's output size follows the input's).
    std::string (*parameters)(const FrameSize& size);
    // Sizes run besides --sizes: mean shift's target is set at 2560x2560.
    std::vector<FrameSize> extra_sizes;
};

// Every case, in the order the tables list them.
const std::vector<BenchCase>& benchCases();

// "1920x1080" → {1920, 1080}; false for anything else.
bool parseSize(const std::string& text, FrameSize& size);

} // namespace framecl::bench
