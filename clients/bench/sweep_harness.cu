// box's `sweep` kernel (kernels/box.cl) outside framecl, where NVIDIA's tools can see
// it: Nsight Compute does not profile OpenCL kernels, but NVIDIA's OpenCL hands out a
// program's PTX (CL_PROGRAM_BINARIES) and the CUDA driver launches that PTX like its
// own, under `ncu`. Built and run on the device machine by scripts/device-sweep, with
// nvcc; not part of the Meson build (Debian has no CUDA).
//
// usage: sweep_harness PRELUDE BOX_CL WIDTH HEIGHT BOX TILE_COLUMNS BAND_ROWS [RUNS]
// Times RUNS launches (L2 flushed before each) with CUDA events and prints the median,
// the registers ptxas gave the kernel, and how many outputs of 13 rows (top, middle and
// bottom edges, every column) differ from a CPU box with the replicate border; then
// times the same launches through OpenCL with profiling events, as framecl-bench does.
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

// NVIDIA's OpenCL device; exits where there is none.
cl_device_id nvidiaDevice()
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
    return device;
}

// The program's PTX from NVIDIA's OpenCL, less the target flag the CUDA driver
// refuses; prints ptxas's register line for the kernel.
std::string buildPtx(const std::string& source)
{
    cl_device_id device = nvidiaDevice();
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

// The same kernel, arguments and groups through NVIDIA's OpenCL, timed as framecl-bench
// times a dispatch: the median of its profiling events' START to END, with the L2
// flushed before each run (`flush`) or back to back. Against the CUDA events this says
// what the OpenCL events add to a command.
double openclMedianMs(const std::string& source, const std::vector<unsigned char>& input, unsigned width,
                      unsigned height, unsigned box, unsigned tile, unsigned band, int runs, bool flush)
{
    cl_device_id device = nvidiaDevice();
    cl_int error = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
    cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);
    const char* text = source.c_str();
    cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &error);
    if (clBuildProgram(program, 1, &device, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
        std::fprintf(stderr, "OpenCL build failed\n");
        std::exit(1);
    }
    cl_kernel kernel = clCreateKernel(program, kernel_name, &error);
    const size_t pixels = input.size(), flush_bytes = size_t(256) << 20;
    cl_mem src = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pixels,
                                const_cast<unsigned char*>(input.data()), &error);
    cl_mem dst = clCreateBuffer(context, CL_MEM_WRITE_ONLY, pixels, nullptr, &error);
    cl_mem scratch = clCreateBuffer(context, CL_MEM_READ_WRITE, flush_bytes, nullptr, &error);
    const cl_uint zero = 0, stride = width, border = 0, border_value = 0;
    const cl_uint values[] = {zero, stride, width, height, box, box, border, border_value, band, tile};
    clSetKernelArg(kernel, 0, sizeof src, &src);
    clSetKernelArg(kernel, 1, sizeof zero, &zero);
    clSetKernelArg(kernel, 2, sizeof stride, &stride);
    clSetKernelArg(kernel, 3, sizeof dst, &dst);
    for (cl_uint i = 0; i < 10; ++i)
        clSetKernelArg(kernel, 4 + i, sizeof(cl_uint), &values[i]);
    const size_t global[2] = {(width + tile - 1) / tile * items, (height + band - 1) / band};
    const size_t local[2] = {items, 1};
    std::vector<double> times;
    for (int run = 0; run < runs; ++run) {
        if (flush) {
            const cl_uchar pattern = cl_uchar(run);
            clEnqueueFillBuffer(queue, scratch, &pattern, 1, 0, flush_bytes, 0, nullptr, nullptr);
        }
        cl_event done = nullptr;
        if (clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, local, 0, nullptr, &done) != CL_SUCCESS) {
            std::fprintf(stderr, "OpenCL launch failed\n");
            std::exit(1);
        }
        clWaitForEvents(1, &done);
        cl_ulong start = 0, end = 0;
        clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
        clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
        clReleaseEvent(done);
        times.push_back(double(end - start) / 1e6);
    }
    clReleaseMemObject(scratch);
    clReleaseMemObject(dst);
    clReleaseMemObject(src);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
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
    int registers = 0, spilled = 0;
    cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel);
    cuFuncGetAttribute(&spilled, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, kernel);
    std::printf("as loaded: %d registers, %d bytes of local memory per item\n", registers, spilled);

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
    std::printf("  OpenCL events: median %.4f ms with the L2 flushed, %.4f ms back to back\n",
                openclMedianMs(source, input, width, height, box, tile, band, runs, true),
                openclMedianMs(source, input, width, height, box, tile, band, runs, false));
    return wrong ? 1 : 0;
}
