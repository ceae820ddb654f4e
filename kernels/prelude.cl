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
