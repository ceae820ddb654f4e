#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace framecl::cli {

struct ProcessRequest {
    std::filesystem::path config_file;
    std::string pipeline;
    std::vector<std::filesystem::path> inputs;
    std::filesystem::path output; // a file for one input, else a directory
};

// Runs a pipeline on image files inside this process, on the device framecld would
// pick, and writes the results as PNG. Returns the process exit code.
int processInProcess(const ProcessRequest& request);

} // namespace framecl::cli
