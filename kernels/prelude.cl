// framecl's kernel prelude: the daemon builds every kernel file with this file in front
// of it (docs/plugin-guide.md, "Shared kernel code"), so that code every filter needs is
// written once. The program cache hashes the source as built, this file included, so an
// edit here rebuilds every program. Its names start with framecl_ or FRAMECL_, leaving
// every other name to the kernel files.

// The `border` parameter of the neighbourhood filters, as a kernel receives it: the
// index of the mode in plugins/plugin_support.hpp's `border_modes`.
#define FRAMECL_BORDER_REPLICATE 0u  // aaa|abcd|ddd (OpenCV's BORDER_REPLICATE)
#define FRAMECL_BORDER_REFLECT101 1u // cb|abcd|cb (BORDER_REFLECT_101)
#define FRAMECL_BORDER_CONSTANT 2u   // the border value (BORDER_CONSTANT)

// The index inside [0, size) that stands for `i` under `border`, or -1 outside the
// image under a constant border (the caller then uses the border value). Reflect101
// repeats with period 2 (size - 1), for windows wider than the image; an image one
// pixel wide reflects onto that pixel.
int framecl_border_index(int i, int size, uint border)
{
    if (i >= 0 && i < size)
        return i;
    if (border == FRAMECL_BORDER_CONSTANT)
        return -1;
    if (border == FRAMECL_BORDER_REPLICATE || size == 1)
        return clamp(i, 0, size - 1);
    const int period = 2 * (size - 1);
    int m = i % period;
    if (m < 0)
        m += period;
    return m < size ? m : period - m;
}

#ifdef __IMAGE_SUPPORT__
// Images (include/framecl/plugin.h, the *_IMAGE kinds) are read at integer coordinates,
// nearest texel. Outside the image the sampler clamps to the edge, which is the
// replicate rule; framecl_read_* map the coordinates first for the others (guide §6.2:
// the texture path does the address arithmetic and caches the 2-D neighbourhood).
__constant sampler_t framecl_image_sampler =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

// Pixel (x, y) of a single-channel image of width x height under `border`.
uint framecl_read_pixel(__read_only image2d_t image, int x, int y, int width, int height, uint border,
                        uint border_value)
{
    if (border != FRAMECL_BORDER_REPLICATE && (x < 0 || x >= width || y < 0 || y >= height)) {
        x = framecl_border_index(x, width, border);
        y = framecl_border_index(y, height, border);
        if (x < 0 || y < 0)
            return border_value;
    }
    return read_imageui(image, framecl_image_sampler, (int2)(x, y)).x;
}

// The same of a four-channel (ABGR8888) image: every channel is border_value outside.
uint4 framecl_read_pixel4(__read_only image2d_t image, int x, int y, int width, int height, uint border,
                          uint border_value)
{
    if (border != FRAMECL_BORDER_REPLICATE && (x < 0 || x >= width || y < 0 || y >= height)) {
        x = framecl_border_index(x, width, border);
        y = framecl_border_index(y, height, border);
        if (x < 0 || y < 0)
            return (uint4)(border_value);
    }
    return read_imageui(image, framecl_image_sampler, (int2)(x, y));
}
#endif

// A stencil whose loads may take fused pointwise stages (include/framecl/plugin.h,
// framecl_pointwise's fused_loads): in a program the daemon fuses, FRAMECL_FUSED_INPUT is
// 1, framecl_fused_input computes the stencil's input pixel from the run's input, and
// the two lists below carry the extra planes and parameter blocks it needs from the
// kernel's parameters to its calls. Here, in every other program, they are empty.
#define FRAMECL_FUSED_INPUT 0
#define FRAMECL_FUSED_PARAMS
#define FRAMECL_FUSED_ARGS

// FRAMECL_KERNEL_WANTED(name): whether this program should define kernel `name`. Always
// in a plugin's own program; in a program the daemon fuses (FRAMECL_FUSED_BUILD 1) only
// for the kernels the fused run dispatches, each of which the daemon defines as
// FRAMECL_FUSED_KERNEL_<name> 1 (an undefined name reads as 0 in #if). A plugin wraps
// each kernel in `#if FRAMECL_KERNEL_WANTED(name)` so that a fused program holds none it
// never runs: a driver compiles every kernel of a program it is asked a binary of, and
// the daemon caches each program's binary (docs/plugin-guide.md, "Fusable stages").
#define FRAMECL_FUSED_BUILD 0
#define FRAMECL_KERNEL_WANTED(name) (!FRAMECL_FUSED_BUILD || FRAMECL_FUSED_KERNEL_##name)
