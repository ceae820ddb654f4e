// box's `sweep` kernel (kernels/box.cl) outside framecl, where NVIDIA's tools can see
// it: Nsight Compute does not profile OpenCL kernels, but NVIDIA's OpenCL hands out a
// program's PTX (CL_PROGRAM_BINARIES) and the CUDA driver launches that PTX like its
// own, under `ncu`. Built and run on the device machine by scripts/device-sweep, with
// nvcc; not part of the Meson build (Debian has no CUDA).
//
// usage: sweep_harness PRELUDE BOX_CL WIDTH HEIGHT BOX TILE_COLUMNS BAND_ROWS [RUNS]
// Times RUNS launches (L2 flushed before each) with CUDA events and prints the median,
// the registers ptxas gave the kernel, and how many outputs of 13 rows (top, middle and
// bottom edges, every column) differ from a CPU box with the replicate border.
#include <CL/cl.h>
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* const kernel_name = "box_sweep_r8";
constexpr unsigned items = 128; // SWEEP_ITEMS in kernels/box.cl

void check(CUresult result, const char* what)
{
    if (result != CUDA_SUCCESS) {
        const char* text = "?";
        cuGetErrorString(result, &text);
        std::fprintf(stderr, "%s: %s\n", what, text);
        std::exit(1);
    }
}

std::string readFile(const char* path)
{
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path);
        std::exit(1);
    }
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The program's PTX from NVIDIA's OpenCL, less the target flag the CUDA driver
// refuses; prints ptxas's register line for the kernel.
std::string buildPtx(const std::string& source)
{
    cl_platform_id platforms[8];
    cl_uint platform_count = 0;
    clGetPlatformIDs(8, platforms, &platform_count);
    cl_device_id device = nullptr;
    for (cl_uint i = 0; i < platform_count && !device; ++i) {
        char name[256] = {};
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, nullptr);
        if (std::strstr(name, "NVIDIA"))
            clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_GPU, 1, &device, nullptr);
    }
    if (!device) {
        std::fprintf(stderr, "no NVIDIA OpenCL device\n");
        std::exit(1);
    }
    cl_int error = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
    const char* text = source.c_str();
    cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &error);
    error = clBuildProgram(program, 1, &device, "-cl-std=CL1.2 -cl-nv-verbose", nullptr, nullptr);
    size_t log_size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_size);
    std::string log(log_size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log_size, log.data(), nullptr);
    if (error != CL_SUCCESS) {
        std::fprintf(stderr, "build failed (%d):\n%s\n", error, log.c_str());
        std::exit(1);
    }
    std::istringstream lines(log);
    bool ours = false;
    for (std::string line; std::getline(lines, line);) {
        if (line.find("Compiling entry") != std::string::npos)
            ours = line.find(std::string(kernel_name) + "'") != std::string::npos;
        if (ours && line.find("registers") != std::string::npos)
            std::printf("%s\n", line.c_str());
    }
    size_t size = 0;
    clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
    std::string ptx(size, '\0');
    char* binary = ptx.data();
    clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, nullptr);
    clReleaseProgram(program);
    clReleaseContext(context);
    ptx.resize(std::strlen(ptx.c_str()));
    const std::string flag = ", texmode_independent";
    if (size_t at = ptx.find(flag); at != std::string::npos)
        ptx.erase(at, flag.size());
    return ptx;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 8) {
        std::fprintf(stderr, "usage: %s PRELUDE BOX_CL WIDTH HEIGHT BOX TILE_COLUMNS BAND_ROWS [RUNS]\n", argv[0]);
        return 2;
    }
    // The image kernels take image arguments the CUDA driver cannot pass: left out.
    const std::string source = "#undef __IMAGE_SUPPORT__\n" + readFile(argv[1]) + "\n" + readFile(argv[2]);
    unsigned width = std::atoi(argv[3]), height = std::atoi(argv[4]), box = std::atoi(argv[5]);
    unsigned tile = std::atoi(argv[6]), band = std::atoi(argv[7]);
    const int runs = argc > 8 ? std::atoi(argv[8]) : 50;
    const std::string ptx = buildPtx(source);

    check(cuInit(0), "cuInit");
    CUdevice device;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    CUcontext context;
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    CUmodule module;
    check(cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData");
    CUfunction kernel;
    check(cuModuleGetFunction(&kernel, module, kernel_name), "cuModuleGetFunction");

    const size_t pixels = size_t(width) * height;
    const size_t flush_bytes = size_t(256) << 20; // over the H100's and H200's L2
    std::vector<unsigned char> input(pixels), output(pixels);
    std::mt19937 random(7);
    for (auto& value : input)
        value = static_cast<unsigned char>(random());
    CUdeviceptr src, dst, flush;
    check(cuMemAlloc(&src, pixels), "cuMemAlloc");
    check(cuMemAlloc(&dst, pixels), "cuMemAlloc");
    check(cuMemAlloc(&flush, flush_bytes), "cuMemAlloc");
    check(cuMemcpyHtoD(src, input.data(), pixels), "cuMemcpyHtoD");

    // box_sweep_r8's arguments (plugins/box/box.cpp's planSweep), border replicate.
    unsigned zero = 0, stride = width, border = 0, border_value = 0;
    void* args[] = {&src,   &zero,   &stride, &dst,    &zero,         &stride, &width,
                    &height, &box,   &box,    &border, &border_value, &band,   &tile};
    const unsigned groups_x = (width + tile - 1) / tile, groups_y = (height + band - 1) / band;
    CUevent start, stop;
    cuEventCreate(&start, 0);
    cuEventCreate(&stop, 0);
    std::vector<float> times;
    for (int run = 0; run < runs; ++run) {
        check(cuMemsetD8(flush, static_cast<unsigned char>(run), flush_bytes), "cuMemsetD8");
        cuEventRecord(start, nullptr);
        check(cuLaunchKernel(kernel, groups_x, groups_y, 1, items, 1, 1, 0, nullptr, args, nullptr),
              "cuLaunchKernel");
        cuEventRecord(stop, nullptr);
        check(cuEventSynchronize(stop), "cuEventSynchronize");
        float ms = 0;
        cuEventElapsedTime(&ms, start, stop);
        times.push_back(ms);
    }
    check(cuMemcpyDtoH(output.data(), dst, pixels), "cuMemcpyDtoH");

    auto at = [&](int x, int y) {
        x = std::clamp(x, 0, int(width) - 1);
        y = std::clamp(y, 0, int(height) - 1);
        return unsigned(input[size_t(y) * width + x]);
    };
    const int h = int(height), half = int(box) / 2, count = int(box * box);
    long wrong = 0, checked = 0;
    for (int y : {0, 1, 7, 31, 32, 33, 100, h / 2, h / 2 + 1, h - 33, h - 20, h - 2, h - 1}) {
        if (y < 0 || y >= h)
            continue;
        for (int x = 0; x < int(width); ++x, ++checked) {
            unsigned sum = 0;
            for (int j = 0; j < int(box); ++j)
                for (int i = 0; i < int(box); ++i)
                    sum += at(x - half + i, y - half + j);
            if (output[size_t(y) * width + x] != (sum + count / 2) / count)
                ++wrong;
        }
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    std::printf("%ux%u box %u, tile %u, band %u: median %.4f ms (min %.4f), %.0f GB/s; %ld of %ld outputs wrong\n",
                width, height, box, tile, band, median, times.front(), 2.0 * pixels / median / 1e6, wrong, checked);
    return wrong ? 1 : 0;
}
