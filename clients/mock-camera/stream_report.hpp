#pragma once
// The mock camera's summary of a stream: counts, achieved rate, latency percentiles and
// the median GPU time of each stage, as text or as one JSON object on stdout.

#include <nlohmann/json.hpp>

#include "frame_stream.hpp"

namespace framecl::mock_camera {

// Fields: frames, ok, failed, lost, busy, dropped, out_of_order, fps (ok frames per
// second from the first submit to the last Done), latency_ms {p50, p99, max} (null
// when no frame came back ok), stages [{name, gpu_ms_median}], backpressure ("block",
// "reject" or "drop_oldest"), deadline_ms (0: none), and mismatches with verification
// on.
nlohmann::json reportJson(const StreamReport& report, const StreamSettings& settings);

// Whether the stream went as asked: no frame failed or was lost, none differed under
// verification, and every other frame came back ok, save those that the session's own
// policy let go: busy ones under reject or drop_oldest, dropped ones under drop_oldest
// or with a deadline. (Under block without a deadline, a busy or dropped frame means
// the daemon had to refuse more than it could hold, which the run should show.)
bool streamSucceeded(const StreamReport& report, const StreamSettings& settings);

void printReportText(const StreamReport& report, const StreamSettings& settings);

} // namespace framecl::mock_camera
