// framecl-copy-bound: the bound a device with memory of its own puts on frames from
// clients' memfds (host-copy, docs/architecture.md, "Memory"), measured without framecld:
// each 1920x1080 NV12 frame's rows written from a memfd mapping to the device, a
// dispatch that copies them, and the rows read back into another memfd, four frames in
// flight on one queue — what every client's frames cost together, with the scheduler
// and the sockets left out. Run over one client's buffers and over eight clients'
// (taken in turn), with the mappings pageable and then page-locked the way the
// daemon's import does it (a CL_MEM_USE_HOST_PTR buffer over each). Every output is
// compared with its input afterwards. One JSON line per case on stdout
// (docs/benchmarks.md, "Many clients").
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <CL/opencl.hpp>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/unique_fd.hpp"
#include "gpu/device_selection.hpp"

namespace {

using namespace framecl;

constexpr size_t width = 1920, height = 1080, rows = height * 3 / 2, frame_bytes = width * rows;
constexpr size_t in_flight = 4;

const char* const copy_source = R"(
kernel void copy_frame(global const uint4* in, global uint4* out) { out[get_global_id(0)] = in[get_global_id(0)]; }
)";

// A memfd mapped shared, as a client's buffer is in the daemon.
class MappedMemfd {
public:
    MappedMemfd() : fd_(memfd_create("framecl-copy-bound", MFD_CLOEXEC))
    {
        if (!fd_.valid() || ftruncate(fd_.get(), off_t(frame_bytes)) != 0)
            throw std::runtime_error("memfd_create or ftruncate failed");
        void* mapped = mmap(nullptr, frame_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
        if (mapped == MAP_FAILED)
            throw std::runtime_error("mmap failed");
        bytes_ = static_cast<uint8_t*>(mapped);
    }
    ~MappedMemfd() { munmap(bytes_, frame_bytes); }
    MappedMemfd(const MappedMemfd&) = delete;
    MappedMemfd& operator=(const MappedMemfd&) = delete;
    uint8_t* bytes() const { return bytes_; }

private:
    UniqueFd fd_;
    uint8_t* bytes_ = nullptr;
};

// One client's buffers: an input and an output memfd, and the device's copies of them.
struct ClientBuffers {
    MappedMemfd in, out;
    cl::Buffer device_in, device_out;
    cl::Buffer pinned_in, pinned_out; // with --pinned: over the mappings, used by no command
};

void check(cl_int err, const char* what)
{
    if (err != CL_SUCCESS)
        throw std::runtime_error(fmt::format("{} failed: {}", what, err));
}

// Frames per second over `frames` frames taken from `sets` in turn; counts the outputs
// that differ from their inputs into `mismatches`.
double run(const cl::CommandQueue& queue, cl::Kernel& kernel, std::vector<ClientBuffers>& sets, size_t frames,
           uint64_t& mismatches)
{
    for (size_t s = 0; s < sets.size(); ++s) {
        for (size_t i = 0; i < frame_bytes; ++i)
            sets[s].in.bytes()[i] = uint8_t(i * 7 + s);
        std::memset(sets[s].out.bytes(), 0, frame_bytes);
    }
    const std::array<size_t, 3> origin{0, 0, 0}, region{width, rows, 1};
    std::deque<cl::Event> pending;
    const auto start = std::chrono::steady_clock::now();
    for (size_t f = 0; f < frames; ++f) {
        if (pending.size() == in_flight) {
            check(pending.front().wait(), "clWaitForEvents");
            pending.pop_front();
        }
        ClientBuffers& set = sets[f % sets.size()];
        check(queue.enqueueWriteBufferRect(set.device_in, CL_FALSE, origin, origin, region, width, 0, width, 0,
                                           set.in.bytes()),
              "clEnqueueWriteBufferRect");
        check(kernel.setArg(0, set.device_in), "clSetKernelArg");
        check(kernel.setArg(1, set.device_out), "clSetKernelArg");
        check(queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(frame_bytes / 16)), "clEnqueueNDRangeKernel");
        cl::Event done;
        check(queue.enqueueReadBufferRect(set.device_out, CL_FALSE, origin, origin, region, width, 0, width, 0,
                                          set.out.bytes(), nullptr, &done),
              "clEnqueueReadBufferRect");
        queue.flush();
        pending.push_back(done);
    }
    check(queue.finish(), "clFinish");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const ClientBuffers& set : sets)
        mismatches += std::memcmp(set.in.bytes(), set.out.bytes(), frame_bytes) != 0;
    return double(frames) / seconds;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"framecl-copy-bound: host-copy frames from memfds, without framecld, pageable and page-locked"};
    std::string device = "auto";
    size_t frames = 2000;
    app.add_option("--device", device, "as gpu.device in framecld.toml")->capture_default_str();
    app.add_option("--frames", frames, "frames per case")->capture_default_str()->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    uint64_t mismatches = 0;
    try {
        const auto candidates = gpu::enumerateDevices();
        const auto chosen = gpu::chooseDevice(candidates, device);
        if (!chosen)
            throw std::runtime_error(chosen.error().message);
        const cl::Device cl_device(candidates[*chosen].device, true);
        const cl::Context context(cl_device);
        const cl::CommandQueue queue(context, cl_device);
        cl::Program program(context, copy_source);
        check(program.build(), "clBuildProgram");
        cl::Kernel kernel(program, "copy_frame");
        for (const bool pinned : {false, true})
            for (const size_t clients : {size_t(1), size_t(8)}) {
                std::vector<ClientBuffers> sets(clients);
                cl_int err = CL_SUCCESS;
                for (ClientBuffers& set : sets) {
                    set.device_in = cl::Buffer(context, CL_MEM_READ_WRITE, frame_bytes, nullptr, &err);
                    check(err, "clCreateBuffer");
                    set.device_out = cl::Buffer(context, CL_MEM_READ_WRITE, frame_bytes, nullptr, &err);
                    check(err, "clCreateBuffer");
                    if (pinned) {
                        set.pinned_in = cl::Buffer(context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, frame_bytes,
                                                   set.in.bytes(), &err);
                        check(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR)");
                        set.pinned_out = cl::Buffer(context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, frame_bytes,
                                                    set.out.bytes(), &err);
                        check(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR)");
                    }
                }
                run(queue, kernel, sets, frames / 10, mismatches); // warm-up
                const double fps = run(queue, kernel, sets, frames, mismatches);
                fmt::print("{}\n", nlohmann::json{{"device", cl_device.getInfo<CL_DEVICE_NAME>()},
                                                  {"memory", pinned ? "page-locked" : "pageable"},
                                                  {"clients", clients},
                                                  {"fps", fps}}
                                       .dump());
            }
    } catch (const std::exception& error) {
        fmt::print(stderr, "framecl-copy-bound: {}\n", error.what());
        return 1;
    }
    if (mismatches > 0) {
        fmt::print(stderr, "framecl-copy-bound: {} outputs differ from their inputs\n", mismatches);
        return 1;
    }
    return 0;
}
