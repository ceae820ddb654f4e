// A stage's parameters checked against a plugin's schema.
#include <cmath>

#include <doctest/doctest.h>

#include "pipeline/plugin_params.hpp"
#include "plugin_test_support.hpp"

using namespace framecl;
using config::StageParameter;
using pipeline::resolveParams;
using test::stageParameter;

namespace {

int acceptAll(const framecl_format* in, const framecl_param_value*, framecl_format* out, char*,
              size_t)
{
    *out = *in;
    return 0;
}

int planNothing(const framecl_format*, const framecl_param_value*, const framecl_plan_request*, framecl_plan*, char*, size_t)
{
    return 0;
}

const char* const outputs[] = {"gx", "gy", "magnitude", nullptr};
const char* const sobel_kernel_files[] = {"sobel.cl"};

// One parameter of each type, in this order.
const framecl_param_schema schema[] = {
    {"radius", FRAMECL_PARAM_TYPE_INT, "window radius", 3, nullptr, 1, 7, nullptr, 0},
    {"gain", FRAMECL_PARAM_TYPE_FLOAT, "scale of the result", 1.5, nullptr, 0, 4, nullptr, 0},
    {"norm", FRAMECL_PARAM_TYPE_BOOL, "normalise", 1, nullptr, 0, 0, nullptr, 0},
    {"output", FRAMECL_PARAM_TYPE_ENUM, "which gradient", 0, "magnitude", 0, 0, outputs, 0},
    {"weights", FRAMECL_PARAM_TYPE_FLOAT_LIST, "per-tap weights", 0, nullptr, 0, 1, nullptr, 3},
};

const framecl_plugin descriptor = {FRAMECL_PLUGIN_ABI_VERSION,
                                   "sobel",
                                   "1.0",
                                   "test schema",
                                   5,
                                   schema,
                                   1,
                                   sobel_kernel_files,
                                   nullptr,
                                   acceptAll,
                                   planNothing,
                                   nullptr,
                                   nullptr};

const pipeline::Plugin& sobel()
{
    static const pipeline::Plugin plugin = test::pluginOf(descriptor);
    return plugin;
}

pipeline::ResolvedParams resolved(const std::vector<StageParameter>& parameters)
{
    auto params = resolveParams(sobel(), parameters);
    REQUIRE_MESSAGE(params, (params ? "" : params.error().message));
    return std::move(*params);
}

// The error for `parameters`, which must have one.
pipeline::ParamError errorOf(const std::vector<StageParameter>& parameters)
{
    auto params = resolveParams(sobel(), parameters);
    REQUIRE_FALSE(params);
    return params.error();
}

} // namespace

TEST_CASE("parameters a stage leaves out get their schema's defaults")
{
    const auto params = resolved({});
    REQUIRE(params.size() == 5);
    CHECK(params[0].int_value == 3);
    CHECK(params[1].float_value == 1.5);
    CHECK(params[2].int_value == 1);
    CHECK(std::string(params[3].string_value) == "magnitude");
    CHECK(params[4].list == nullptr); // a list has no default
    CHECK(params[4].list_count == 0);
}

TEST_CASE(
    "parameters a stage sets reach the plugin in schema order, whatever order they were written in")
{
    const auto params =
        resolved({stageParameter("weights", std::vector<double>{0.25, 0.5}),
                  stageParameter("output", std::string("gx")), stageParameter("norm", false),
                  stageParameter("radius", int64_t(7))});
    CHECK(params[0].int_value == 7);
    CHECK(params[1].float_value == 1.5);
    CHECK(params[2].int_value == 0);
    CHECK(std::string(params[3].string_value) == "gx");
    REQUIRE(params[4].list_count == 2);
    CHECK(params[4].list[0] == 0.25);
    CHECK(params[4].list[1] == 0.5);
}

TEST_CASE("an integer is a fine value for a FLOAT parameter")
{
    CHECK(resolved({stageParameter("gain", int64_t(2))})[1].float_value == 2.0);
}

TEST_CASE("an unknown parameter is refused with the closest name and its place")
{
    const auto error =
        errorOf({stageParameter("radius", int64_t(2), 11), stageParameter("nrom", true, 12)});
    CHECK(error.message == "unknown parameter 'nrom'; did you mean 'norm'?");
    CHECK(error.where.file == "pipelines.d/p.toml");
    CHECK(error.where.line == 12);
    CHECK(error.where.column == 5);
}

TEST_CASE("an unknown parameter with no close name is refused with the names the plugin takes")
{
    CHECK(errorOf({stageParameter("threshold", int64_t(2), 4)}).message ==
          "unknown parameter 'threshold'; sobel takes radius, gain, norm, output, weights");
}

TEST_CASE("a value of the wrong type is refused, naming both types")
{
    const auto error = errorOf({stageParameter("radius", 2.5, 7)});
    CHECK(error.message == "radius must be an integer, got a float");
    CHECK(error.where.line == 7);
    CHECK(errorOf({stageParameter("output", int64_t(1))}).message ==
          "output must be a string, got an integer");
    CHECK(errorOf({stageParameter("norm", int64_t(1))}).message ==
          "norm must be a boolean, got an integer");
    CHECK(errorOf({stageParameter("weights", 0.5)}).message ==
          "weights must be an array of numbers, got a float");
}

TEST_CASE("a number outside its range is refused, naming the range")
{
    const auto error = errorOf({stageParameter("radius", int64_t(9), 3)});
    CHECK(error.message == "radius must be between 1 and 7, got 9");
    CHECK(error.where.line == 3);
    CHECK(errorOf({stageParameter("gain", 4.5)}).message ==
          "gain must be between 0 and 4, got 4.5");
    CHECK(errorOf({stageParameter("gain", std::nan(""))}).message ==
          "gain must be between 0 and 4, got nan");
}

TEST_CASE("an ENUM value that is not allowed is refused, naming the allowed values")
{
    const auto error = errorOf({stageParameter("output", std::string("gz"), 5)});
    CHECK(error.message == "output must be one of gx, gy, magnitude, got 'gz'");
    CHECK(error.where.line == 5);
}

TEST_CASE("a list that is empty, too long or holds an element out of range is refused")
{
    CHECK(errorOf({stageParameter("weights", std::vector<double>{})}).message ==
          "weights must hold 1 to 3 numbers, got 0");
    CHECK(errorOf({stageParameter("weights", std::vector<double>{0, 0, 0, 0})}).message ==
          "weights must hold 1 to 3 numbers, got 4");
    CHECK(errorOf({stageParameter("weights", std::vector<double>{0, 1.5})}).message ==
          "weights[1] must be between 0 and 1, got 1.5");
}

TEST_CASE("resolved parameters keep their strings and lists valid when moved")
{
    std::vector<pipeline::ResolvedParams> kept;
    for (int i = 0; i < 8; ++i) // enough to make the vector move its elements
        kept.push_back(resolved({stageParameter("output", std::string("gy")),
                                 stageParameter("weights", std::vector<double>{0.125})}));
    for (const auto& params : kept) {
        CHECK(std::string(params[3].string_value) == "gy");
        CHECK(params.values()[4].list[0] == 0.125);
    }
}
