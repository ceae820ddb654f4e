#pragma once
// The tables of the main config file other than [[pipeline]]: [daemon], [gpu],
// [limits] and [[client_class]]. Each reads what is there, keeps the defaults for what
// is not, and reports every problem to the file's context. The ranges are documented
// in docs/configuration.md; keep the two in step.

#include <vector>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "config/file_context.hpp"

namespace framecl::config {

// `table` may be empty: the default socket paths are checked all the same.
void readDaemonTable(FileContext& file, const toml::table& table, DaemonConfig& daemon);
void readGpuTable(FileContext& file, const toml::table& table, GpuConfig& gpu);
void readLimitsTable(FileContext& file, const toml::table& table, Limits& limits);
void readClientClasses(FileContext& file, const toml::array& array,
                       std::vector<ClientClass>& classes);

} // namespace framecl::config
