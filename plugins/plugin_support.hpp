#pragma once
// What framecl's own plugins share: building plan arguments, reading ENUM parameters,
// the border modes, naming formats in messages, and the Bayer formats' patterns. Header-only and internal to this
// folder: a plugin links nothing of framecld (docs/plugin-guide.md), so these are
// plain inline functions over the types of framecl/plugin.h.

#include <cstdint>
#include <cstring>

#include <framecl/plugin.h>
#include <linux/videodev2.h> // the V4L2 fourccs of the Bayer formats

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

// A dispatch of `kernel` (of kernel file 0) with one work item per pixel of `in`,
// tileable along both axes, whose first arguments are plane 0 of the input and of the
// output, then the width and height; the caller adds the rest.
inline framecl_dispatch pixelDispatch(const char* kernel, const framecl_format& in)
{
    framecl_dispatch dispatch{};
    dispatch.kernel = kernel;
    dispatch.dims = 2;
    dispatch.global[0] = in.width;
    dispatch.global[1] = in.height;
    dispatch.tileable_axes = FRAMECL_AXIS_X | FRAMECL_AXIS_Y;
    dispatch.args[0] = planeArg(FRAMECL_ARG_INPUT_PLANE, 0);
    dispatch.args[1] = planeArg(FRAMECL_ARG_OUTPUT_PLANE, 0);
    dispatch.args[2] = uintArg(in.width);
    dispatch.args[3] = uintArg(in.height);
    dispatch.arg_count = 4;
    return dispatch;
}

// The stage's parameter block (plugin.h, param_block): one kernel argument.
inline framecl_arg paramsArg()
{
    framecl_arg arg{};
    arg.kind = FRAMECL_ARG_PARAMS;
    return arg;
}

// Appends `count` values of T to a parameter block at `*used`, or returns false where
// they do not fit in `block_size`.
template <typename T>
bool appendToBlock(uint8_t* block, uint32_t block_size, uint32_t* used, const T* values, uint32_t count)
{
    const uint32_t bytes = uint32_t(sizeof(T)) * count;
    if (*used + bytes > block_size)
        return false;
    std::memcpy(block + *used, values, bytes);
    *used += bytes;
    return true;
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

// How a Bayer format stores its samples (docs/filters.md, "Bayer formats"); the kernels
// of bayer.cl know the packings by these numbers.
enum class BayerPacking : uint32_t {
    bytes = 0,  // 8 bits, one byte per sample
    words = 1,  // 10 or 12 bits in the low bits of a little-endian 16-bit word
    mipi10 = 2, // MIPI CSI-2 RAW10: 4 samples in 5 bytes
    mipi12 = 3, // MIPI CSI-2 RAW12: 2 samples in 3 bytes
};

struct BayerFormat {
    uint32_t fourcc;
    const char* name;
    const char* order; // the colours of the top-left 2x2 block, row by row: "RGGB", "BGGR", "GRBG" or "GBRG"
    uint32_t bits;
    BayerPacking packing;
    uint32_t unpacked; // the format of the same order and bits with one sample per byte or word

    // The channel (0 R, 1 G, 2 B) of the sample at (x, y).
    uint32_t channel(uint32_t x, uint32_t y) const
    {
        const char colour = order[2 * (y & 1u) + (x & 1u)];
        return colour == 'R' ? 0 : colour == 'G' ? 1 : 2;
    }

    uint32_t maxCode() const { return (1u << bits) - 1; }
};

inline constexpr BayerFormat bayer_formats[] = {
    {V4L2_PIX_FMT_SRGGB8, "SRGGB8", "RGGB", 8, BayerPacking::bytes, V4L2_PIX_FMT_SRGGB8},
    {V4L2_PIX_FMT_SBGGR8, "SBGGR8", "BGGR", 8, BayerPacking::bytes, V4L2_PIX_FMT_SBGGR8},
    {V4L2_PIX_FMT_SGRBG8, "SGRBG8", "GRBG", 8, BayerPacking::bytes, V4L2_PIX_FMT_SGRBG8},
    {V4L2_PIX_FMT_SGBRG8, "SGBRG8", "GBRG", 8, BayerPacking::bytes, V4L2_PIX_FMT_SGBRG8},
    {V4L2_PIX_FMT_SRGGB10, "SRGGB10", "RGGB", 10, BayerPacking::words, V4L2_PIX_FMT_SRGGB10},
    {V4L2_PIX_FMT_SBGGR10, "SBGGR10", "BGGR", 10, BayerPacking::words, V4L2_PIX_FMT_SBGGR10},
    {V4L2_PIX_FMT_SGRBG10, "SGRBG10", "GRBG", 10, BayerPacking::words, V4L2_PIX_FMT_SGRBG10},
    {V4L2_PIX_FMT_SGBRG10, "SGBRG10", "GBRG", 10, BayerPacking::words, V4L2_PIX_FMT_SGBRG10},
    {V4L2_PIX_FMT_SRGGB12, "SRGGB12", "RGGB", 12, BayerPacking::words, V4L2_PIX_FMT_SRGGB12},
    {V4L2_PIX_FMT_SBGGR12, "SBGGR12", "BGGR", 12, BayerPacking::words, V4L2_PIX_FMT_SBGGR12},
    {V4L2_PIX_FMT_SGRBG12, "SGRBG12", "GRBG", 12, BayerPacking::words, V4L2_PIX_FMT_SGRBG12},
    {V4L2_PIX_FMT_SGBRG12, "SGBRG12", "GBRG", 12, BayerPacking::words, V4L2_PIX_FMT_SGBRG12},
    {V4L2_PIX_FMT_SRGGB10P, "SRGGB10P", "RGGB", 10, BayerPacking::mipi10, V4L2_PIX_FMT_SRGGB10},
    {V4L2_PIX_FMT_SBGGR10P, "SBGGR10P", "BGGR", 10, BayerPacking::mipi10, V4L2_PIX_FMT_SBGGR10},
    {V4L2_PIX_FMT_SGRBG10P, "SGRBG10P", "GRBG", 10, BayerPacking::mipi10, V4L2_PIX_FMT_SGRBG10},
    {V4L2_PIX_FMT_SGBRG10P, "SGBRG10P", "GBRG", 10, BayerPacking::mipi10, V4L2_PIX_FMT_SGBRG10},
    {V4L2_PIX_FMT_SRGGB12P, "SRGGB12P", "RGGB", 12, BayerPacking::mipi12, V4L2_PIX_FMT_SRGGB12},
    {V4L2_PIX_FMT_SBGGR12P, "SBGGR12P", "BGGR", 12, BayerPacking::mipi12, V4L2_PIX_FMT_SBGGR12},
    {V4L2_PIX_FMT_SGRBG12P, "SGRBG12P", "GRBG", 12, BayerPacking::mipi12, V4L2_PIX_FMT_SGRBG12},
    {V4L2_PIX_FMT_SGBRG12P, "SGBRG12P", "GBRG", 12, BayerPacking::mipi12, V4L2_PIX_FMT_SGBRG12},
};

// The Bayer format of `fourcc`, or nullptr for any other format.
inline const BayerFormat* bayerFormat(uint32_t fourcc)
{
    for (const auto& format : bayer_formats)
        if (format.fourcc == fourcc)
            return &format;
    return nullptr;
}

// A format as framecl names it ("ABGR8888", whose fourcc reads "AB24"), or another
// fourcc as its four characters, trailing spaces dropped, written into `text`.
inline const char* formatName(uint32_t fourcc, char text[5])
{
    if (const BayerFormat* bayer = bayerFormat(fourcc))
        return bayer->name;
    switch (fourcc) {
    case DRM_FORMAT_R8:
        return "R8";
    case DRM_FORMAT_R16:
        return "R16";
    case DRM_FORMAT_NV12:
        return "NV12";
    case DRM_FORMAT_ABGR8888:
        return "ABGR8888";
    case DRM_FORMAT_ABGR16161616:
        return "ABGR16161616";
    }
    for (int i = 0; i < 4; ++i)
        text[i] = char((fourcc >> (8 * i)) & 0xff);
    text[4] = '\0';
    for (int i = 3; i > 0 && text[i] == ' '; --i)
        text[i] = '\0';
    return text;
}

} // namespace framecl_plugins
