// The self-test's report as text and as JSON (self_test.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "selftest/self_test.hpp"

namespace framecl::selftest {

const char* outcomeName(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Passed:
        return "passed";
    case Outcome::Failed:
        return "FAILED";
    case Outcome::NotOffered:
        break;
    }
    return "not offered";
}

size_t Report::count(Outcome outcome) const
{
    return size_t(std::count_if(checks.begin(), checks.end(), [&](const Check& c) { return c.outcome == outcome; }));
}

std::string reportText(const Report& report)
{
    std::string text = fmt::format("framecld self-test on {}\n", report.device);
    std::string area;
    for (const Check& check : report.checks) {
        if (check.area != area) {
            area = check.area;
            text += fmt::format("\n{}\n", area);
        }
        text += fmt::format("  {:<28} {:<12} {}\n", check.name, outcomeName(check.outcome), check.detail);
    }
    text += fmt::format("\n{} passed, {} failed, {} not offered\n", report.count(Outcome::Passed),
                        report.count(Outcome::Failed), report.count(Outcome::NotOffered));
    return text;
}

nlohmann::json reportJson(const Report& report)
{
    nlohmann::json checks = nlohmann::json::array();
    for (const Check& check : report.checks)
        checks.push_back({{"area", check.area},
                          {"name", check.name},
                          {"outcome", check.outcome == Outcome::Failed ? "failed" : outcomeName(check.outcome)},
                          {"detail", check.detail}});
    return {{"device", report.device},
            {"passed", report.count(Outcome::Passed)},
            {"failed", report.count(Outcome::Failed)},
            {"not_offered", report.count(Outcome::NotOffered)},
            {"checks", checks}};
}

} // namespace framecl::selftest
