// A stage's parameters as a config or an OpenSession's overrides give them, checked
// against a plugin's schema (pipeline::resolveParams), and what the plugin then does
// with the values it accepts: negotiate a format and plan a frame of it. The inputs
// name the plugin's own keys most of the time (and unknown ones now and then), give
// values of every TOML type, within and outside the schema's ranges, and frames of
// every format at sizes from 0 to far over a camera's. A parameter set the resolver
// accepts must hold values the schema allows; whatever the plugin answers, the registry's
// checks of a plan (Plugin::plan) hold or name what broke them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <drm_fourcc.h>
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_daemon.hpp"
#include "plugins.hpp"

using namespace framecl;

namespace {

config::ParameterValue fuzzedValue(FuzzedDataProvider& input, const pipeline::ParamSchema* schema)
{
    switch (input.ConsumeIntegralInRange(0, 5)) {
    case 0: return input.ConsumeBool();
    case 1: // an integer, mostly within or just outside the schema's range
        if (schema && input.ConsumeBool() && std::abs(schema->min) < 1e12 && std::abs(schema->max) < 1e12)
            return input.ConsumeIntegralInRange<int64_t>(int64_t(schema->min) - 2, int64_t(schema->max) + 2);
        return input.ConsumeIntegral<int64_t>();
    case 2: return input.ConsumeFloatingPoint<double>();
    case 3: // a string, mostly one the schema allows
        if (schema && !schema->allowed.empty() && input.ConsumeBool())
            return schema->allowed[input.ConsumeIntegralInRange<size_t>(0, schema->allowed.size() - 1)];
        return input.ConsumeRandomLengthString(32);
    case 4: {
        std::vector<double> list(input.ConsumeIntegralInRange<size_t>(0, 100));
        for (double& element : list)
            element = input.ConsumeBool() ? double(input.ConsumeIntegralInRange(-300, 300))
                                          : input.ConsumeFloatingPoint<double>();
        return list;
    }
    default: return double(input.ConsumeIntegralInRange(-10, 300));
    }
}

framecl_format fuzzedFormat(FuzzedDataProvider& input)
{
    static constexpr uint32_t formats[] = {DRM_FORMAT_R8, DRM_FORMAT_R16, DRM_FORMAT_NV12, DRM_FORMAT_ABGR8888};
    framecl_format format{};
    format.fourcc = input.ConsumeIntegralInRange(0, 7) == 0 ? input.ConsumeIntegral<uint32_t>()
                                                            : input.PickValueInArray(formats);
    const bool any = input.ConsumeIntegralInRange(0, 7) == 0;
    format.width = any ? input.ConsumeIntegral<uint32_t>() : input.ConsumeIntegralInRange<uint32_t>(0, 8192);
    format.height = any ? input.ConsumeIntegral<uint32_t>() : input.ConsumeIntegralInRange<uint32_t>(0, 8192);
    return format;
}

// Whether `value` is one `schema` allows (docs/plugin-guide.md, "Parameters").
bool allowed(const pipeline::ParamSchema& schema, const framecl_param_value& value)
{
    const auto within = [&](double x) { return x >= schema.min && x <= schema.max; };
    switch (schema.type) {
    case FRAMECL_PARAM_TYPE_INT: return within(double(value.int_value));
    case FRAMECL_PARAM_TYPE_FLOAT: return within(value.float_value);
    case FRAMECL_PARAM_TYPE_BOOL: return value.int_value == 0 || value.int_value == 1;
    case FRAMECL_PARAM_TYPE_ENUM:
        for (const auto& name : schema.allowed)
            if (value.string_value && name == value.string_value)
                return true;
        return false;
    case FRAMECL_PARAM_TYPE_FLOAT_LIST:
        if (value.list_count == 0 || value.list_count > schema.max_count)
            return false;
        for (uint32_t i = 0; i < value.list_count; ++i)
            if (!within(value.list[i]))
                return false;
        return true;
    }
    return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzedDataProvider input(data, size);
    const auto plugins = fuzz::builtPlugins()->plugins();
    const pipeline::Plugin& plugin = *plugins[input.ConsumeIntegralInRange<size_t>(0, plugins.size() - 1)];
    const auto& schema = plugin.params();

    std::vector<config::StageParameter> parameters(input.ConsumeIntegralInRange<size_t>(0, schema.size() + 1));
    for (config::StageParameter& parameter : parameters) {
        const pipeline::ParamSchema* entry =
            !schema.empty() && input.ConsumeIntegralInRange(0, 7) != 0
                ? &schema[input.ConsumeIntegralInRange<size_t>(0, schema.size() - 1)]
                : nullptr;
        parameter.key = entry ? entry->name : input.ConsumeRandomLengthString(16);
        parameter.value = fuzzedValue(input, entry);
    }
    const auto params = pipeline::resolveParams(plugin, parameters);
    if (!params) {
        if (params.error().message.empty())
            fuzz::fail("parameters refused with no reason");
        return 0;
    }
    if (params->size() != schema.size())
        fuzz::fail("resolved parameters that are not one per schema entry");
    // A list left out stays empty (a plugin tells "not set" so); every value given must
    // be one the schema allows.
    for (size_t i = 0; i < schema.size(); ++i) {
        const bool given = std::any_of(parameters.begin(), parameters.end(),
                                       [&](const config::StageParameter& p) { return p.key == schema[i].name; });
        if (given && !allowed(schema[i], (*params)[i]))
            fuzz::fail("a value the schema does not allow was accepted for " + schema[i].name);
    }

    const framecl_format in = fuzzedFormat(input);
    const auto out = plugin.negotiate(in, *params);
    if (!out)
        return 0;
    const auto plan = plugin.plan(in, *params);
    if (!plan && plan.error().message.empty())
        fuzz::fail("a plan refused with no reason");
    return 0;
}
