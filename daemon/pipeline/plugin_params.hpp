#pragma once
// A pipeline stage's parameters checked against its plugin's schema: the values the
// plugin receives in negotiate and plan, one per schema entry, defaults filled in.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "config/config.hpp"
#include "framecl/plugin.h"

namespace framecl::pipeline {

class Plugin;

// A parameter that does not fit the schema. `message` names the key ("radius must be
// between 1 and 7, got 9"); `where` is the value's place in the config file, so the
// caller can put it first and the stage in between.
struct ParamError {
    config::SourceLocation where;
    std::string message;
};

// One entry of a plugin's parameter schema, copied out of the plugin.
struct ParamSchema {
    std::string name;
    framecl_param_type type = FRAMECL_PARAM_TYPE_INT;
    std::string help;
    double default_number = 0;  // INT, FLOAT, BOOL
    std::string default_string; // ENUM
    double min = 0;             // INT, FLOAT, FLOAT_LIST
    double max = 0;
    std::vector<std::string> allowed; // ENUM
    uint32_t max_count = 0;           // FLOAT_LIST
};

// The values of one stage, in schema order, as the plugin receives them. The strings
// and lists they point to are owned here, each in its own heap allocation, so the
// pointers survive a move of the whole object (a std::string's inline buffer would
// not). Move-only: a copy would point into its source.
class ResolvedParams {
public:
    ResolvedParams() = default;
    ResolvedParams(ResolvedParams&&) = default;
    ResolvedParams& operator=(ResolvedParams&&) = default;

    // What the plugin's negotiate and plan take; null when the plugin has no parameters.
    const framecl_param_value* values() const { return values_.empty() ? nullptr : values_.data(); }
    size_t size() const { return values_.size(); }
    const framecl_param_value& operator[](size_t i) const { return values_[i]; }
    // Value `i` as the config gave it (or its default).
    const config::ParameterValue& source(size_t i) const { return sources_[i]; }

    // A copy, owning its own strings and lists.
    ResolvedParams copy() const;
    // A copy in which parameter `index` holds `value` instead: the variant the tuner or
    // framecl-bench tries. The caller passes a value the schema allows.
    ResolvedParams with(size_t index, const config::ParameterValue& value) const;

private:
    friend tl::expected<ResolvedParams, ParamError>
    resolveParams(const Plugin& plugin, const std::vector<config::StageParameter>& parameters);

    // Appends the value of the next schema entry, already checked against it.
    void append(const config::ParameterValue& value);

    std::vector<framecl_param_value> values_;
    std::vector<config::ParameterValue> sources_;
    std::vector<std::unique_ptr<std::string>> strings_;
    std::vector<std::unique_ptr<std::vector<double>>> lists_;
};

// "unknown parameter 'gian'; did you mean 'gain'?": a key `plugin` does not take, with
// its closest name within two edits, or the names it takes.
std::string unknownParameter(const Plugin& plugin, const std::string& key);

// The index of the plugin's `variant` parameter: an ENUM named so whose first value
// is "auto" (docs/plugin-guide.md), which the tuner may replace with another of its
// values. Nothing when the plugin has none.
std::optional<size_t> variantParam(const std::vector<ParamSchema>& schema);

// Checks every parameter a stage sets against `plugin`'s schema and fills the
// defaults of those it leaves out. The first problem, in the order written, is the
// error: an unknown key (with a suggestion within two edits), a value of the wrong
// type (an integer is a fine FLOAT, a float is never an INT), a number outside
// [min, max], an ENUM string not allowed, a list empty, too long, or with an element
// out of range.
tl::expected<ResolvedParams, ParamError>
resolveParams(const Plugin& plugin, const std::vector<config::StageParameter>& parameters);

} // namespace framecl::pipeline
