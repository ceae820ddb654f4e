#pragma once
// "Did you mean ...?": the known name closest to a misspelt one.

#include <span>
#include <string_view>

namespace framecl {

// The closest of `known` to `name` within an edit distance of 2 (optimal string
// alignment: a swap of two neighbours, the commonest typo, is one edit), or empty. A
// known name that starts with `name` counts as one edit away, so a key written without
// its unit (`kernel_budget` for `kernel_budget_ms`) still gets its suggestion.
std::string_view closestName(std::string_view name, std::span<const std::string_view> known);

} // namespace framecl
