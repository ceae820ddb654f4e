#pragma once
// framecld --self-test (docs/man/framecld.8.scd, docs/packaging.md "On a board"): the
// first thing to run on a new board. On the configured device it exercises every path
// the device offers and says, check by check, what works, what the device does not
// offer, and what failed and why.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace framecl::selftest {

enum class Outcome { Passed, Failed, NotOffered };

// "passed", "FAILED", "not offered"
const char* outcomeName(Outcome outcome);

struct Check {
    std::string area;   // "import", "recording", "filter box", ...
    std::string name;   // "memfd", "khr", "variant direct", ...
    Outcome outcome;
    std::string detail; // what was checked, what the device lacks, or what went wrong
};

struct Report {
    std::string device; // name, OpenCL version, driver
    std::vector<Check> checks;

    size_t count(Outcome outcome) const;
    bool failed() const { return count(Outcome::Failed) > 0; }
};

// Opens the device `config` names (its gpu section; its plugin and kernel directories)
// and runs every check. Never throws; a device that does not open is one failed check.
Report runSelfTest(const config::Config& config);

// For a person: one line per check, grouped by area, then the totals.
std::string reportText(const Report& report);

// For a script: {"device", "passed", "failed", "not_offered", "checks": [{"area",
// "name", "outcome" ("passed", "failed", "not offered"), "detail"}]}.
nlohmann::json reportJson(const Report& report);

} // namespace framecl::selftest
