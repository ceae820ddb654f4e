#pragma once
// framecl-bench's results and their two forms: markdown tables for
// docs/benchmarks.md and JSON for machines.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace framecl::bench {

// A stage of a pipeline case, timed within the whole pipeline's frames.
struct StageMeasurement {
    std::string name;
    uint64_t median_ns = 0; // its dispatches' GPU time
    uint64_t bytes = 0;     // its input and output, tightly packed
};

struct Measurement {
    std::string filter;  // the case's name
    std::string input;   // "R8 1920x1080"
    std::string variant; // the plugin's name for it; "tuned: ..." for the tuner's choice
    uint64_t median_ns = 0;   // GPU time
    uint64_t min_ns = 0;
    uint64_t max_ns = 0;
    uint64_t frame_bytes = 0; // input plus output, tightly packed
    double speedup = 0;       // baseline's median over this one's; 0 without a baseline
    std::string error;        // why it did not run; the numbers are then 0
    bool failed_check = false; // it ran, but its output failed the bench's check (error says how)
    uint64_t wall_median_ns = 0; // on the host, enqueue to completion (clFinish)
    // Of median_ns, the median time of the daemon's copies of the input into images
    // (an image variant's input that no stage wrote as an image); 0 for the others.
    uint64_t image_copy_median_ns = 0;
    // With --dump: the files holding the input frame and this measurement's output,
    // tightly packed, and the output's shape; for a moving pair (bench_cases.hpp, Motion)
    // also the previous frame, of the input's shape.
    std::string input_file;
    std::string output_file;
    std::string previous_file;
    std::string output; // "R8 960x540"
    // A pipeline case (bench_cases.hpp, BenchCase::then): each stage's time and bytes;
    // the median span from the first dispatch's start to the last one's end (the stages'
    // times and the device's gaps between them); and the copy skeleton's median: one
    // clEnqueueCopyBuffer per stage moving that stage's bytes (half read, half written),
    // in the same order, timed the same way. What the unfused pipeline's memory traffic
    // costs at the device's copy speed, with no work done.
    std::vector<StageMeasurement> stages;
    uint64_t span_median_ns = 0;
    uint64_t skeleton_median_ns = 0;
    uint64_t skeleton_span_median_ns = 0;
    // With --dump, where a stage made statistics: the last frame's struct
    // framecl_statistics, as framecl/statistics.h lays it out.
    std::string statistics_file;
    // A fused pipeline (docs/architecture.md, "Fusion"): the same pipeline's unfused time,
    // and of that frame the slowest stage's time, both measured in the same run.
    uint64_t unfused_median_ns = 0;
    uint64_t slowest_stage_ns = 0;

    double gigabytesPerSecond() const { return median_ns ? double(frame_bytes) / double(median_ns) : 0; }
};

struct Report {
    std::string device;       // name, driver, OpenCL version
    std::string command;      // how the bench was run
    std::string timing;       // what the times are read from (gpu/timestamps.hpp)
    int runs = 0;             // timed runs per measurement, after the warm-up
    double copy_gbs = 0;      // the device's copy bandwidth: bytes read and written per ns
    uint64_t copy_bytes = 0;  // the buffer it was measured with
    std::vector<Measurement> measurements;
};

std::string markdown(const Report& report);
nlohmann::json json(const Report& report);

} // namespace framecl::bench
