#pragma once
// What framecl's own plugins share: building plan arguments, reading ENUM parameters,
// the border modes, and naming formats in messages. Header-only and internal to this
// folder: a plugin links nothing of framecld (docs/plugin-guide.md), so these are
// plain inline functions over the types of framecl/plugin.h.

#include <cstdint>
#include <cstring>

#include <framecl/plugin.h>

namespace framecl_plugins {

// The values of every neighbourhood filter's `border`; kernels receive the index
// (BORDER_REPLICATE 0, BORDER_REFLECT101 1, BORDER_CONSTANT 2 in their .cl files).
inline const char* const border_modes[] = {"replicate", "reflect101", "constant", nullptr};

// The `border` and `border_value` parameters, the same in every neighbourhood filter
// (docs/filters.md): which pixels stand outside the image.
constexpr framecl_param_schema borderSchema()
{
    return {
        .name = "border",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = "pixels outside the image: replicate (aaa|abcd|ddd), reflect101 (cb|abcd|cb) or constant "
                "(border_value)",
        .default_number = 0,
        .default_string = "replicate",
        .min = 0,
        .max = 0,
        .allowed = border_modes,
        .max_count = 0,
    };
}

constexpr framecl_param_schema borderValueSchema()
{
    return {
        .name = "border_value",
        .type = FRAMECL_PARAM_TYPE_INT,
        .help = "the value of every channel of a pixel outside the image when border is constant",
        .default_number = 0,
        .default_string = nullptr,
        .min = 0,
        .max = 255,
        .allowed = nullptr,
        .max_count = 0,
    };
}

// The `variant` parameter of a plugin with several kernels for one result. `allowed`
// starts with "auto", the default: the daemon's tuner (daemon/pipeline/tuner.cpp)
// recognises the parameter by its name and that first value, and times the others.
constexpr framecl_param_schema variantSchema(const char* help, const char* const* allowed)
{
    return {
        .name = "variant",
        .type = FRAMECL_PARAM_TYPE_ENUM,
        .help = help,
        .default_number = 0,
        .default_string = "auto",
        .min = 0,
        .max = 0,
        .allowed = allowed,
        .max_count = 0,
    };
}

// Plane `plane` of the stage's input or output frame, or the plan's intermediate or
// state `plane` (three kernel arguments).
inline framecl_arg planeArg(framecl_arg_kind kind, uint32_t plane)
{
    framecl_arg arg{};
    arg.kind = kind;
    arg.index = plane;
    return arg;
}

inline framecl_arg uintArg(uint32_t value)
{
    framecl_arg arg{};
    arg.kind = FRAMECL_ARG_UINT;
    arg.uint_value = value;
    return arg;
}

// The index of an ENUM parameter's value in `allowed`; the daemon has checked that it
// is one of them.
inline uint32_t enumIndex(const framecl_param_value& value, const char* const* allowed)
{
    uint32_t index = 0;
    for (uint32_t i = 0; allowed[i]; ++i)
        if (std::strcmp(value.string_value, allowed[i]) == 0)
            index = i;
    return index;
}

// A format as framecl names it ("ABGR8888", whose fourcc reads "AB24"), or another
// fourcc as its four characters, trailing spaces dropped, written into `text`.
inline const char* formatName(uint32_t fourcc, char text[5])
{
    switch (fourcc) {
    case DRM_FORMAT_R8:
        return "R8";
    case DRM_FORMAT_R16:
        return "R16";
    case DRM_FORMAT_NV12:
        return "NV12";
    case DRM_FORMAT_ABGR8888:
        return "ABGR8888";
    }
    for (int i = 0; i < 4; ++i)
        text[i] = char((fourcc >> (8 * i)) & 0xff);
    text[4] = '\0';
    for (int i = 3; i > 0 && text[i] == ' '; --i)
        text[i] = '\0';
    return text;
}

} // namespace framecl_plugins
