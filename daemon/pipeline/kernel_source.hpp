#pragma once
// The OpenCL C source the daemon builds for a plugin's kernel file: the shared prelude
// (kernels/prelude.cl: border rules and other code every filter needs), then the file.
// The program cache keys a binary on this whole text, so an edit to either rebuilds it.

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace framecl::pipeline {

// The prelude's file name, looked up in the kernel directories like any kernel file.
inline constexpr const char* kernel_prelude_file = "prelude.cl";

// The daemon's code of the fused kernels (pipeline/fusion.hpp): each format's pixel
// loads and stores.
inline constexpr const char* kernel_fusion_file = "fusion.cl";

// Kernel file `file` from the first of `kernel_dirs` holding it, after a #line directive
// so that the compiler's messages give the file's own name and line numbers.
Result<std::string> readKernelFile(const std::vector<std::filesystem::path>& kernel_dirs, const std::string& file);

// The prelude and kernel file `file`, each as readKernelFile gives it.
Result<std::string> readKernelSource(const std::vector<std::filesystem::path>& kernel_dirs, const std::string& file);

} // namespace framecl::pipeline
