#pragma once
// Inside the GPU layer: the three Replay implementations behind makeReplay, and what
// they share. makeReplay has checked the updates and the entry points before any of
// these is called.

#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "gpu/context.hpp"
#include "gpu/replay.hpp"

namespace framecl::gpu::replay_detail {

// Sets `update`'s argument on `kernel` with clSetKernelArg; `name` is its dispatch's,
// for the error.
Result<void> setArgument(cl_kernel kernel, const std::string& name, const ArgUpdate& update);

// Sets each update's argument on its dispatch's kernel.
Result<void> setArguments(const std::vector<ReplayDispatch>& dispatches, const std::vector<ArgUpdate>& updates);

// Every update names an existing dispatch and holds 1 to 8 bytes; `call` names the
// caller in the error ("Replay::enqueue").
Result<void> checkUpdates(const char* call, const std::vector<ReplayDispatch>& dispatches,
                          const std::vector<ArgUpdate>& updates);

// Fails unless `lane` is `home_lane`, for which a recording was made: what `call`
// enqueues is bound there.
Result<void> checkRecordingLane(const char* call, uint32_t lane, uint32_t home_lane);

// The local size to pass to an enqueue: nullptr for {0, 0}, where the runtime chooses.
inline const size_t* localSize(const ReplayDispatch& dispatch)
{
    return dispatch.local[0] == 0 && dispatch.local[1] == 0 ? nullptr : dispatch.local.data();
}

Result<std::unique_ptr<Replay>> makeListReplay(const GpuContext& gpu, std::vector<ReplayDispatch> dispatches,
                                               const std::vector<ArgUpdate>& initial);
Result<std::unique_ptr<Replay>> makeCommandBufferReplay(const GpuContext& gpu, uint32_t home_lane,
                                                        std::vector<ReplayDispatch> dispatches,
                                                        const std::vector<ArgUpdate>& initial);
Result<std::unique_ptr<Replay>> makeRecordingReplay(const GpuContext& gpu, uint32_t home_lane,
                                                    std::vector<ReplayDispatch> dispatches,
                                                    const std::vector<ArgUpdate>& initial);

} // namespace framecl::gpu::replay_detail
