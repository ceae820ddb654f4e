#pragma once
// Fusion of stages (docs/architecture.md, "Fusion"): where consecutive stages of a session
// each say they are pointwise (plugin.h, framecl_pointwise), one kernel the daemon writes
// loads each pixel of the run's input once, applies their functions in turn and stores
// the last one's output, so that nothing of the run goes to memory in between. A stencil
// that reads its input itself may begin a run: its function makes the first block. The
// stages' own plans run wherever a run is not fused.

#include <string>
#include <vector>

#include "pipeline/fusion_note.hpp"
#include "pipeline/pipeline_definition.hpp"
#include "pipeline/stage_plan.hpp"

namespace framecl::pipeline {

// One stage of a run, as the fused kernel calls it.
struct FusedMember {
    framecl_format in{};
    framecl_format out{};
    PointwiseFunction function;
};

// The fused kernel `kernel` over `members`, the text that follows the prelude, the fused
// loads and stores and the members' kernel files: one work item per `block` x `block`
// pixels of the run's input (1 or 2), its arguments as fusedPlan binds them.
std::string fusedKernel(const std::vector<FusedMember>& members, const std::string& kernel, uint32_t block);

// The run's one dispatch of `kernel` (which must outlive the plan): the run's input planes,
// its output planes, the width and height, and each member's parameter block, in order
// (FRAMECL_ARG_PARAMS with `index` the member's place in the run).
framecl_plan fusedPlan(const std::vector<FusedMember>& members, const char* kernel, uint32_t block);

// Finds the runs of two or more consecutive stages of `stages` (negotiateFormats' answer
// for `pipeline`) that fuse, builds each run's kernel and sets the stages' run fields
// (StagePlan::run_first, fused_plan). A stage fuses where its plugin says it is pointwise
// for its input (or, at a run's head, a stencil), its plan binds no state or statistics,
// and its input (but a stencil's) and output are formats the fused kernel loads and
// stores, of one size. A run is left unfused, with its
// note saying why, where its stages' build options differ, its frame is not whole blocks,
// or its kernel does not build, or its first stage's choice says the tuner timed it
// faster unfused (StageChoice::fuse). Nothing is fused where the pipeline says
// fuse = false.
std::vector<FusionNote> fuseStages(const PipelineDefinition& pipeline, std::vector<StagePlan>& stages);

// The runs fuseStages would fuse in `stages`, as (first, last), without building them:
// what the tuner times fused and unfused.
std::vector<std::pair<uint32_t, uint32_t>> fusableRuns(const PipelineDefinition& pipeline,
                                                       const std::vector<StagePlan>& stages);

// What fusion makes of `pipeline`, for `framecl pipelines`: one line per distinct answer
// over the input formats framecld holds, at a size every format allows, such as
// "stages 2-5 (demosaic, ccm, tone, color) as one kernel for SRGGB8, SRGGB10, ...",
// none where nothing fuses, or "off (fuse = false)". Asks the plugins only: nothing is
// built.
std::vector<std::string> describeFusion(const PipelineDefinition& pipeline);

} // namespace framecl::pipeline
