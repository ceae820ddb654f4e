#include "pipeline/gpu_turns.hpp"

namespace framecl::pipeline {

Result<cl::Event> enqueueInTurn(GpuTurns* turns, const gpu::GpuContext& gpu, uint64_t predicted_ns, uint32_t lane,
                                const EnqueueWork& enqueue)
{
    if (turns)
        return turns->enqueueInTurn(predicted_ns, lane, enqueue);
    auto event = enqueue();
    if (event)
        gpu.lane(lane).flush();
    return event;
}

} // namespace framecl::pipeline
