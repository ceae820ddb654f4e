// Test plugin `broken_kernel`: a kernel with a syntax error (the missing semicolon
// after the declaration), so that its build fails with a build log.

__kernel void broken(__global uchar* dst)
{
    uint x = get_global_id(0)
    dst[x] = 0;
}
