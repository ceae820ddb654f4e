// The built-in `copy` pipeline: the bytes of a frame, unchanged. It exists to measure
// the transport (import, dispatch, completion) with no filter cost on top.
// Reads 1 byte and writes 1 byte per work item.

__kernel void copy_bytes(__global const uchar* restrict src,
                         __global uchar* restrict dst)
{
    const size_t i = get_global_id(0);
    dst[i] = src[i];
}
