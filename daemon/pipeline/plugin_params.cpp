#include "pipeline/plugin_params.hpp"

#include <algorithm>
#include <optional>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join

#include "base/closest_name.hpp"
#include "pipeline/plugin_registry.hpp"

namespace framecl::pipeline {
namespace {

// As the config's own errors name TOML types (config/table_reader.cpp).
const char* writtenType(const config::ParameterValue& value)
{
    return std::visit(
        [](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>)
                return "a boolean";
            else if constexpr (std::is_same_v<T, int64_t>)
                return "an integer";
            else if constexpr (std::is_same_v<T, double>)
                return "a float";
            else if constexpr (std::is_same_v<T, std::string>)
                return "a string";
            else
                return "an array";
        },
        value);
}

const char* expectedType(framecl_param_type type)
{
    switch (type) {
    case FRAMECL_PARAM_TYPE_INT:
        return "an integer";
    case FRAMECL_PARAM_TYPE_FLOAT:
        return "a number";
    case FRAMECL_PARAM_TYPE_BOOL:
        return "a boolean";
    case FRAMECL_PARAM_TYPE_ENUM:
        return "a string";
    case FRAMECL_PARAM_TYPE_FLOAT_LIST:
        return "an array of numbers";
    }
    return "nothing"; // Plugin::fromDescriptor refuses other types
}

// Written so that nan is out of every range.
bool inRange(double value, const ParamSchema& schema)
{
    return value >= schema.min && value <= schema.max;
}

std::string rangeError(const std::string& what, const ParamSchema& schema, double value)
{
    return fmt::format("{} must be between {} and {}, got {}", what, schema.min, schema.max, value);
}

// The value `written` gives the parameter of `schema`, in the alternative its type
// uses (INT: int64_t, FLOAT: double, BOOL: bool, ENUM: string, FLOAT_LIST: vector),
// or what is wrong with it.
tl::expected<config::ParameterValue, std::string> check(const ParamSchema& schema,
                                                        const config::ParameterValue& written)
{
    const auto wrongType = [&] {
        return tl::unexpected(fmt::format("{} must be {}, got {}", schema.name,
                                          expectedType(schema.type), writtenType(written)));
    };
    switch (schema.type) {
    case FRAMECL_PARAM_TYPE_INT: {
        const auto* value = std::get_if<int64_t>(&written);
        if (!value)
            return wrongType();
        if (!inRange(double(*value), schema))
            return tl::unexpected(rangeError(schema.name, schema, double(*value)));
        return *value;
    }
    case FRAMECL_PARAM_TYPE_FLOAT: {
        std::optional<double> value;
        if (const auto* real = std::get_if<double>(&written))
            value = *real;
        else if (const auto* integer = std::get_if<int64_t>(&written))
            value = double(*integer);
        if (!value)
            return wrongType();
        if (!inRange(*value, schema))
            return tl::unexpected(rangeError(schema.name, schema, *value));
        return *value;
    }
    case FRAMECL_PARAM_TYPE_BOOL:
        if (!std::holds_alternative<bool>(written))
            return wrongType();
        return written;
    case FRAMECL_PARAM_TYPE_ENUM: {
        const auto* value = std::get_if<std::string>(&written);
        if (!value)
            return wrongType();
        if (std::find(schema.allowed.begin(), schema.allowed.end(), *value) == schema.allowed.end())
            return tl::unexpected(fmt::format("{} must be one of {}, got '{}'", schema.name,
                                              fmt::join(schema.allowed, ", "), *value));
        return written;
    }
    case FRAMECL_PARAM_TYPE_FLOAT_LIST: {
        const auto* list = std::get_if<std::vector<double>>(&written);
        if (!list)
            return wrongType();
        if (list->empty() || list->size() > schema.max_count)
            return tl::unexpected(fmt::format("{} must hold 1 to {} numbers, got {}", schema.name,
                                              schema.max_count, list->size()));
        for (size_t i = 0; i < list->size(); ++i)
            if (!inRange((*list)[i], schema))
                return tl::unexpected(
                    rangeError(fmt::format("{}[{}]", schema.name, i), schema, (*list)[i]));
        return written;
    }
    }
    return wrongType();
}

config::ParameterValue defaultValue(const ParamSchema& schema)
{
    switch (schema.type) {
    case FRAMECL_PARAM_TYPE_INT:
        return int64_t(schema.default_number);
    case FRAMECL_PARAM_TYPE_FLOAT:
        return schema.default_number;
    case FRAMECL_PARAM_TYPE_BOOL:
        return schema.default_number != 0;
    case FRAMECL_PARAM_TYPE_ENUM:
        return schema.default_string;
    case FRAMECL_PARAM_TYPE_FLOAT_LIST:
        break;
    }
    return std::vector<double>{}; // a list has no default (plugin.h)
}

} // namespace

void ResolvedParams::append(const config::ParameterValue& value)
{
    framecl_param_value out{};
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) {
                out.int_value = v ? 1 : 0;
            } else if constexpr (std::is_same_v<T, int64_t>) {
                out.int_value = v;
            } else if constexpr (std::is_same_v<T, double>) {
                out.float_value = v;
            } else if constexpr (std::is_same_v<T, std::string>) {
                strings_.push_back(std::make_unique<std::string>(v));
                out.string_value = strings_.back()->c_str();
            } else if (!v.empty()) {
                lists_.push_back(std::make_unique<std::vector<double>>(v));
                out.list = lists_.back()->data();
                out.list_count = uint32_t(v.size());
            }
        },
        value);
    values_.push_back(out);
    sources_.push_back(value);
}

ResolvedParams ResolvedParams::copy() const
{
    ResolvedParams copy;
    for (const auto& source : sources_)
        copy.append(source);
    return copy;
}

ResolvedParams ResolvedParams::with(size_t index, const config::ParameterValue& value) const
{
    ResolvedParams copy;
    for (size_t i = 0; i < sources_.size(); ++i)
        copy.append(i == index ? value : sources_[i]);
    return copy;
}

std::string unknownParameter(const Plugin& plugin, const std::string& key)
{
    std::vector<std::string_view> names;
    for (const ParamSchema& schema : plugin.params())
        names.push_back(schema.name);
    if (names.empty())
        return fmt::format("unknown parameter '{}'; {} takes no parameters", key, plugin.name());
    const std::string_view suggestion = closestName(key, names);
    if (!suggestion.empty())
        return fmt::format("unknown parameter '{}'; did you mean '{}'?", key, suggestion);
    return fmt::format("unknown parameter '{}'; {} takes {}", key, plugin.name(),
                       fmt::join(names, ", "));
}

std::optional<size_t> variantParam(const std::vector<ParamSchema>& schema)
{
    for (size_t i = 0; i < schema.size(); ++i)
        if (schema[i].name == "variant" && schema[i].type == FRAMECL_PARAM_TYPE_ENUM &&
            !schema[i].allowed.empty() && schema[i].allowed.front() == "auto")
            return i;
    return std::nullopt;
}

tl::expected<ResolvedParams, ParamError>
resolveParams(const Plugin& plugin, const std::vector<config::StageParameter>& parameters)
{
    const std::vector<ParamSchema>& schema = plugin.params();
    std::vector<std::optional<config::ParameterValue>> chosen(schema.size());
    for (const config::StageParameter& parameter : parameters) {
        const auto entry = std::find_if(schema.begin(), schema.end(), [&](const ParamSchema& s) {
            return s.name == parameter.key;
        });
        if (entry == schema.end())
            return tl::unexpected(
                ParamError{parameter.where, unknownParameter(plugin, parameter.key)});
        auto value = check(*entry, parameter.value);
        if (!value)
            return tl::unexpected(ParamError{parameter.where, std::move(value.error())});
        chosen[size_t(entry - schema.begin())] = std::move(*value);
    }

    ResolvedParams resolved;
    for (size_t i = 0; i < schema.size(); ++i)
        resolved.append(chosen[i] ? *chosen[i] : defaultValue(schema[i]));
    return resolved;
}

} // namespace framecl::pipeline
