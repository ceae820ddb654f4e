#pragma once
// Whether the opened device still runs work, asked after a frame failed on it: a frame
// can fail alone (its kernel ran out of resources), or because the device is lost (a
// GPU fault or hang that the driver could not recover the context from), after which
// every frame fails (docs/architecture.md, "A failed frame and a lost GPU").

#include <chrono>

#include "base/result.hpp"
#include "gpu/context.hpp"

namespace framecl::gpu {

// A 4-byte fill on a queue of its own, then read back, within `timeout`: an error
// names the step that failed, or says that it did not finish.
Result<void> probeDevice(const GpuContext& gpu, std::chrono::milliseconds timeout);

} // namespace framecl::gpu
