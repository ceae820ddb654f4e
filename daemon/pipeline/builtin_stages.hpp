#pragma once
// The stages framecld can run before filter plugins exist: `copy` and the colour
// plugin's `abgr_to_y`. Each says which output a given input gives (negotiate) and
// which dispatches one frame takes (plan) — the two questions the plugin ABI will ask
// of plugins, so the plugin registry can replace this table without touching Session.

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"

namespace framecl::pipeline {

// A frame's format and size; plane offsets and strides belong to each buffer.
struct FrameShape {
    uint32_t fourcc = 0;
    uint32_t width = 0;
    uint32_t height = 0;
    bool operator==(const FrameShape&) const = default;
};

// "ABGR8888 640x480"
std::string describe(const FrameShape& shape);

// A plane of the stage's input or output frame, bound as three kernel arguments:
// (buffer, byte offset of the plane, stride in bytes).
struct PlaneArg {
    enum class Side { Input, Output };
    Side side;
    uint32_t plane;
};
using DispatchArg = std::variant<PlaneArg, uint32_t>;

struct DispatchPlan {
    std::string kernel_name;
    std::array<size_t, 2> global; // 2D NDRange
    std::vector<DispatchArg> args;
};

struct BuiltinStage {
    std::string plugin;      // as written in a [[pipeline]] stage
    std::string op;          // value of the stage's `op`, empty when it takes none
    std::string kernel_file; // in one of daemon.kernel_dirs
    // The output shape for an input shape, or an error naming what does not fit.
    Result<FrameShape> (*negotiate)(const FrameShape& in);
    // The dispatches of one frame of `in` (a shape negotiate accepted).
    std::vector<DispatchPlan> (*plan)(const FrameShape& in);

    std::string name() const { return op.empty() ? plugin : plugin + " op=" + op; }
};

// The stage a config stage names, or an error saying which stages exist.
Result<const BuiltinStage*> findBuiltinStage(const config::Stage& stage);

// The stage of the built-in `copy` pipeline, offered whatever the config says.
const BuiltinStage& copyStage();

} // namespace framecl::pipeline
