#pragma once
// What each stage of a pipeline agrees to for one input, the first steps of
// Session::open: the formats negotiated stage by stage, each stage's plan for its input,
// and the outputs written as images for the stage after (plugin.h,
// framecl_plan_request). Only the plugins are asked: no OpenCL call.

#include <cstdint>
#include <optional>
#include <vector>

#include "base/result.hpp"
#include "framecl/plugin.h"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/session.hpp"

namespace framecl::pipeline {

// One stage as a session runs it.
struct StagePlan {
    ResolvedParams params; // as configured, with the chosen variant
    StageChoice choice;    // SessionOptions::stage_choices' for the stage, else the default
    FrameShape in{};
    FrameShape out{};
    framecl_plan plan{}; // for `in`
    // The plugin's parameter block for `in` and `params` (plugin.h, param_block); empty
    // where it has none.
    std::vector<uint8_t> param_block;
    // The plan writes its output as an image, for the next stage, which reads it only so.
    bool out_image = false;
    // Fusion (pipeline/fusion.hpp): the first and last stage of the run this stage is
    // part of; the stage itself where it is not fused. The run's first stage runs
    // `fused_plan`, the run's one dispatch, built into `fused_program` (which the
    // pipeline's programs own); its other stages run nothing.
    uint32_t run_first = 0;
    uint32_t run_last = 0;
    std::optional<framecl_plan> fused_plan;
    cl_program fused_program = nullptr;

    bool fused() const { return run_first != run_last; }
    // What the session runs for the stage: its plan, the run's, or nothing.
    const framecl_plan& runs() const;
};

// Each stage's output format and plan for `input`, stage by stage, with the variant
// `choices` names (none, or one per stage), or the first stage's error as
// "stage K (label): ...". Every output and plan intermediate stays within
// `max_frame_pixels` (0: no limit).
Result<std::vector<StagePlan>> negotiateFormats(const PipelineDefinition& pipeline, const FrameShape& input,
                                                const std::vector<StageChoice>& choices, uint64_t max_frame_pixels);

// Where stage k reads its single-plane input only as an image, asks stage k - 1 for its
// plan again, to write it as one, and takes that plan where it does; not where either
// stage is fused (the daemon's copy fills the image then). From the last stage
// back, so that each stage's plan is final (asked again or not) before what it reads is
// looked at: a plan asked for an image output may read its own input differently.
Result<void> askImageOutputs(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages,
                             uint64_t max_frame_pixels);

// The indices that `plan`'s arguments of `kind` bind (planes or intermediates), as bits.
uint32_t boundIndices(const framecl_plan& plan, framecl_arg_kind kind);

} // namespace framecl::pipeline
