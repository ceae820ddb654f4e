#pragma once
// Parameters a client changes from a frame on (docs/protocol.md, "Parameters per
// frame"): a stage's numeric parameters, as a camera's control loop moves gains, a
// colour matrix or a black level every few frames. They reach the kernels through the
// stage's parameter block (plugin.h, param_block), so a change is a write of that
// block before the frame and never a new recording: a value that would change a
// stage's dispatches, its output or its block's size is refused.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "framecl/plugin.h"
#include "pipeline/plugin_params.hpp"

namespace framecl::pipeline {

// One value a Submit sets.
struct FrameParameter {
    uint32_t stage; // from 1, as `framecl pipelines` lists a pipeline's stages
    std::string key;
    std::vector<double> values; // one for an INT or FLOAT parameter; a FLOAT_LIST's values
};

// Every stage's parameters for a frame and the blocks made from them. Made once per
// change and shared, read-only, by the frames that run with it.
struct ParameterSet {
    std::vector<ResolvedParams> params;       // per stage
    std::vector<std::vector<uint8_t>> blocks; // per stage; empty where the stage has none
};

// What a session keeps of a stage to check a change against: the plan and output it
// was opened with, for its input.
struct StageParameterCheck {
    const Plugin* plugin = nullptr;
    std::string label; // "bayer black_level=64", for messages
    framecl_format in{};
    framecl_format out{};
    framecl_plan plan{};
    uint32_t output_image_planes = 0; // as the plan was asked (plugin.h, framecl_plan_request)
};

// `now` with `changes` applied, in order, each checked against its plugin's schema, or
// the first problem as "stage K (label): ...": a stage that does not exist or has no
// parameter block, an unknown key, a parameter that is not a number or a list of them,
// a value the schema refuses, and a value that changes the stage's plan, output or
// block size.
Result<std::shared_ptr<const ParameterSet>> changeParameters(const std::vector<StageParameterCheck>& stages,
                                                             const ParameterSet& now,
                                                             std::span<const FrameParameter> changes);

// Whether two plans dispatch the same kernels with the same arguments, sizes,
// intermediates, constants and state.
bool samePlan(const framecl_plan& a, const framecl_plan& b);

} // namespace framecl::pipeline
