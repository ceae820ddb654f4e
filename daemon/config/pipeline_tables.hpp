#pragma once
// [[pipeline]] tables, in the main file and in the files of the pipeline directories.
// Only structure and types are checked here: which plugins exist and which parameters
// they take is known only once plugins load.

#include <vector>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "config/file_context.hpp"

namespace framecl::config {

// Appends the pipelines of `array` (the value of the `pipeline` key) to `pipelines`,
// which holds those of the files read before, so that a name used twice is reported
// wherever the two definitions are.
void readPipelines(FileContext& file, const toml::array& array, std::vector<Pipeline>& pipelines);

} // namespace framecl::config
