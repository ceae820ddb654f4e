#pragma once
// The stages framecld can run before filter plugins exist: `copy` and the colour
// plugin's `abgr_to_y`. Each knows its kernel and how to bind a frame to it. The
// plugin registry replaces this table when plugins land; the pipeline runner's
// interface stays.

#include <cstdint>
#include <string>
#include <vector>

#include <CL/cl.h>

#include "base/result.hpp"
#include "config/config.hpp"

namespace framecl::pipeline {

struct FrameShape {
    uint32_t fourcc = 0;
    uint32_t width = 0;
    uint32_t height = 0;
};

struct BuiltinStage {
    std::string plugin;      // as written in a [[pipeline]] stage
    std::string op;          // value of the stage's `op`, empty when it takes none
    std::string kernel_file; // in one of daemon.kernel_dirs
    std::string kernel_name;
    // The output shape for an input shape, or an error naming what does not fit.
    Result<FrameShape> (*negotiate)(const FrameShape& in);
    // Sets the kernel's arguments for one frame and returns its 2D global size.
    Result<std::vector<size_t>> (*bind)(cl_kernel kernel, cl_mem in, cl_mem out, const FrameShape& in_shape);
};

// The stage a config stage names, or an error saying which plugins exist.
Result<const BuiltinStage*> findBuiltinStage(const config::Stage& stage);

// The stage of the built-in `copy` pipeline, offered whatever the config says.
const BuiltinStage& copyStage();

} // namespace framecl::pipeline
