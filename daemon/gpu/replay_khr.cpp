// gpu.recording = khr: cl_khr_command_buffer, at the ABI of Debian 12's cl_ext.h
// (command buffer 0.9.x, mutable dispatch 0.9.0). A command buffer captures the
// kernel arguments when a command is recorded, so:
//   - with mutable dispatch, one command buffer whose frame arguments are updated
//     with clUpdateMutableCommandsKHR each frame;
//   - without, one finalized command buffer per set of frame arguments, in an LRU:
//     clients rotate small buffer pools, so a few (input, output) pairs repeat. An
//     entry is found by the arguments' bytes and holds a reference to each buffer it
//     names: a released buffer's handle is not given to a new buffer (PoCL reuses the
//     freed memory at once) while a command buffer recorded for it can still match.
//     Each buffer is recorded from clones of the kernels that it owns and nothing
//     changes afterwards: PoCL 3.1 reads a kernel's arguments when the buffer is
//     enqueued, not when the command is recorded as the extension says, so buffers
//     recorded from shared kernels would all follow the last frame's arguments.
// Every entry point comes from the vendor table.

#include <cstring>
#include <list>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "gpu/cl_error.hpp"
#include "gpu/replay_modes.hpp"

namespace framecl::gpu::replay_detail {
namespace {

// Enough for a pool of a few input and output buffers per session.
constexpr size_t kCachedCommandBuffers = 8;

// The one place a command buffer is released.
struct ReleaseCommandBuffer {
    clReleaseCommandBufferKHR_fn release;
    void operator()(cl_command_buffer_khr buffer) const { release(buffer); }
};
using CommandBuffer = std::unique_ptr<std::remove_pointer_t<cl_command_buffer_khr>, ReleaseCommandBuffer>;

// A command buffer, the kernels recorded into it, and its last enqueue.
struct RecordedBuffer {
    CommandBuffer buffer;
    std::vector<cl::Kernel> kernels; // one per dispatch
    cl::Event last;
};

cl_bitfield deviceBits(cl_device_id device, cl_device_info query)
{
    cl_bitfield bits = 0;
    if (clGetDeviceInfo(device, query, sizeof(bits), &bits, nullptr) != CL_SUCCESS)
        return 0;
    return bits;
}

// Records every dispatch, with `recorded.kernels` for its kernels, into a new command
// buffer on the live queue, finalizes it and keeps it in `recorded.buffer`. With
// `handles`, the commands are made mutable in their arguments and their handles are
// returned there, one per dispatch.
Result<void> record(const VendorEntryPoints& vendor, cl_command_queue queue,
                    const std::vector<ReplayDispatch>& dispatches, cl_command_buffer_flags_khr flags,
                    RecordedBuffer& recorded, std::vector<cl_mutable_command_khr>* handles)
{
    const cl_command_buffer_properties_khr properties[] = {CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0};
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr created = vendor.clCreateCommandBufferKHR(1, &queue, properties, &err);
    if (err != CL_SUCCESS)
        return fail(clFailure("clCreateCommandBufferKHR", err, fmt::format("{} dispatches", dispatches.size())));
    CommandBuffer buffer(created, ReleaseCommandBuffer{vendor.clReleaseCommandBufferKHR});

    const cl_ndrange_kernel_command_properties_khr mutable_arguments[] = {
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, 0};
    if (handles)
        handles->assign(dispatches.size(), nullptr);
    for (size_t i = 0; i < dispatches.size(); ++i) {
        const ReplayDispatch& dispatch = dispatches[i];
        // dispatch.flush_after cannot be honoured: nothing flushes inside a command buffer.
        // command_queue is NULL: without cl_khr_command_buffer_multi_device a command
        // goes to the buffer's one queue.
        err = vendor.clCommandNDRangeKernelKHR(buffer.get(), nullptr, handles ? mutable_arguments : nullptr,
                                               recorded.kernels[i](), dispatch.dims, dispatch.offset.data(),
                                               dispatch.global.data(), localSize(dispatch), 0, nullptr, nullptr,
                                               handles ? &(*handles)[i] : nullptr);
        if (err != CL_SUCCESS)
            return fail(clFailure("clCommandNDRangeKernelKHR", err, dispatch.name));
    }
    err = vendor.clFinalizeCommandBufferKHR(buffer.get());
    if (err != CL_SUCCESS)
        return fail(clFailure("clFinalizeCommandBufferKHR", err, fmt::format("{} dispatches", dispatches.size())));
    recorded.buffer = std::move(buffer);
    return {};
}

// What both flavours share: the entry points, the live queue the buffers were created
// on, and whether a buffer may be enqueued again while an earlier enqueue is pending.
class CommandBufferReplay : public Replay {
public:
    CommandBufferReplay(const GpuContext& gpu, uint32_t home_lane, std::vector<ReplayDispatch> dispatches)
        : vendor_(gpu.vendor()), home_lane_(home_lane), queue_(gpu.lane(home_lane)), dispatches_(std::move(dispatches)),
          simultaneous_(deviceBits(gpu.device(), CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR) &
                        CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR)
    {
    }

    RecordingMode mode() const override { return RecordingMode::Khr; }

protected:
    cl_command_buffer_flags_khr simultaneousFlag() const
    {
        return simultaneous_ ? CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR : 0;
    }

    // A pending buffer without simultaneous use cannot be enqueued again (nor, to be
    // safe, updated): wait for its last enqueue. Frames in flight then share a buffer
    // only on devices that allow it.
    Result<void> waitUntilReusable(const RecordedBuffer& recorded) const
    {
        if (simultaneous_ || !recorded.last())
            return {};
        const cl_event last = recorded.last();
        const cl_int err = clWaitForEvents(1, &last);
        if (err != CL_SUCCESS)
            return fail(clFailure("clWaitForEvents", err, "the command buffer's previous enqueue"));
        return {};
    }

    Result<std::vector<cl::Event>> submit(RecordedBuffer& recorded)
    {
        cl_event event = nullptr;
        const cl_int err = vendor_.clEnqueueCommandBufferKHR(0, nullptr, recorded.buffer.get(), 0, nullptr, &event);
        if (err != CL_SUCCESS)
            return fail(clFailure("clEnqueueCommandBufferKHR", err,
                                  fmt::format("{} dispatches", dispatches_.size())));
        recorded.last = cl::Event(event); // takes the reference the enqueue returned
        return std::vector<cl::Event>{recorded.last};
    }

    VendorEntryPoints vendor_;
    uint32_t home_lane_;
    cl::CommandQueue queue_; // the home lane's: a buffer is enqueued on the queue it was recorded for
    std::vector<ReplayDispatch> dispatches_;

private:
    bool simultaneous_;
};

class CachedCommandBuffers final : public CommandBufferReplay {
public:
    using CommandBufferReplay::CommandBufferReplay;

    Result<std::vector<cl::Event>> enqueue(const std::vector<ArgUpdate>& updates, uint32_t lane) override
    {
        if (auto bound = checkRecordingLane("Replay::enqueue", lane, home_lane_); !bound)
            return tl::unexpected(bound.error());
        if (auto checked = checkUpdates("Replay::enqueue", dispatches_, updates); !checked)
            return tl::unexpected(checked.error());
        auto found = find(updates);
        if (!found)
            return tl::unexpected(found.error());
        RecordedBuffer& recorded = **found;
        if (auto reusable = waitUntilReusable(recorded); !reusable)
            return tl::unexpected(reusable.error());
        return submit(recorded);
    }

    void forget(const std::vector<ArgUpdate>& updates) override
    {
        makeKey(updates);
        for (auto entry = cache_.begin(); entry != cache_.end(); ++entry) {
            if (entry->key != key_)
                continue;
            // The driver holds no reference to the buffers it ran with (spec): they go
            // with the entry, so its last enqueue must be over first.
            if (const cl_event last = entry->recorded.last(); last)
                clWaitForEvents(1, &last);
            cache_.erase(entry);
            return;
        }
    }

    // The buffer recorded with `updates`, recorded now if there is none.
    Result<RecordedBuffer*> find(const std::vector<ArgUpdate>& updates)
    {
        makeKey(updates);
        for (auto entry = cache_.begin(); entry != cache_.end(); ++entry) {
            if (entry->key == key_) {
                cache_.splice(cache_.begin(), cache_, entry); // most recently used first
                return &cache_.front().recorded;
            }
        }

        RecordedBuffer recorded;
        for (const ReplayDispatch& dispatch : dispatches_) {
            cl_int err = CL_SUCCESS;
            cl_kernel clone = clCloneKernel(dispatch.kernel(), &err); // with the session's arguments
            if (err != CL_SUCCESS)
                return fail(clFailure("clCloneKernel", err, dispatch.name));
            recorded.kernels.emplace_back(clone);
            for (const auto& [index, bytes] : dispatch.local_args)
                if (err = clSetKernelArg(clone, index, bytes, nullptr); err != CL_SUCCESS)
                    return fail(clFailure("clSetKernelArg", err, fmt::format("{}: __local argument {}", dispatch.name, index)));
        }
        for (const ArgUpdate& update : updates)
            if (auto set = setArgument(recorded.kernels[update.dispatch](), dispatches_[update.dispatch].name, update);
                !set)
                return tl::unexpected(set.error());
        if (auto made = record(vendor_, queue_(), dispatches_, simultaneousFlag(), recorded, nullptr); !made)
            return tl::unexpected(made.error());

        std::vector<cl::Memory> named;
        for (const ArgUpdate& update : updates)
            if (update.buffer) {
                cl_mem handle = nullptr;
                std::memcpy(&handle, update.value.data(), sizeof handle);
                named.emplace_back(handle, true); // retained
            }
        if (cache_.size() == kCachedCommandBuffers)
            cache_.pop_back(); // released now; the driver keeps it until a pending enqueue ends
        cache_.push_front(Entry{key_, std::move(recorded), std::move(named)});
        return &cache_.front().recorded;
    }

private:
    // key_ = the bytes of `updates`, in order.
    void makeKey(const std::vector<ArgUpdate>& updates)
    {
        key_.clear();
        for (const ArgUpdate& update : updates) {
            key_.append(reinterpret_cast<const char*>(&update.dispatch), sizeof(update.dispatch));
            key_.append(reinterpret_cast<const char*>(&update.arg_index), sizeof(update.arg_index));
            key_.append(reinterpret_cast<const char*>(&update.size), sizeof(update.size));
            key_.append(reinterpret_cast<const char*>(update.value.data()), update.size);
        }
    }

    struct Entry {
        std::string key; // the bytes of a frame's updates, in order
        RecordedBuffer recorded;
        std::vector<cl::Memory> buffers; // the key's buffers, held so their handles stay theirs
    };
    std::list<Entry> cache_;
    std::string key_; // kept to build each frame's key without allocating
};

class MutableCommandBuffer final : public CommandBufferReplay {
public:
    using CommandBufferReplay::CommandBufferReplay;

    // The kernels are the session's, their arguments set to the initial ones; only
    // clUpdateMutableCommandsKHR changes them afterwards.
    Result<void> recordOnce()
    {
        for (const ReplayDispatch& dispatch : dispatches_)
            recorded_.kernels.push_back(dispatch.kernel);
        return record(vendor_, queue_(), dispatches_, CL_COMMAND_BUFFER_MUTABLE_KHR | simultaneousFlag(), recorded_,
                      &commands_);
    }

    Result<std::vector<cl::Event>> enqueue(const std::vector<ArgUpdate>& updates, uint32_t lane) override
    {
        if (auto bound = checkRecordingLane("Replay::enqueue", lane, home_lane_); !bound)
            return tl::unexpected(bound.error());
        if (auto checked = checkUpdates("Replay::enqueue", dispatches_, updates); !checked)
            return tl::unexpected(checked.error());
        if (auto reusable = waitUntilReusable(recorded_); !reusable)
            return tl::unexpected(reusable.error());

        // One config per dispatch with updates, its arguments contiguous in args_
        // (reserved first: configs point into it).
        args_.clear();
        args_.reserve(updates.size());
        configs_.clear();
        for (size_t i = 0; i < dispatches_.size(); ++i) {
            const size_t first = args_.size();
            for (const ArgUpdate& update : updates)
                if (update.dispatch == i)
                    args_.push_back({update.arg_index, update.size, update.value.data()});
            if (args_.size() == first)
                continue;
            cl_mutable_dispatch_config_khr config{};
            config.type = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
            config.command = commands_[i];
            config.num_args = static_cast<cl_uint>(args_.size() - first);
            config.work_dim = dispatches_[i].dims; // sizes stay as recorded
            config.arg_list = args_.data() + first;
            configs_.push_back(config);
        }
        if (!configs_.empty()) {
            const cl_mutable_base_config_khr base{CL_STRUCTURE_TYPE_MUTABLE_BASE_CONFIG_KHR, nullptr,
                                                  static_cast<cl_uint>(configs_.size()), configs_.data()};
            const cl_int err = vendor_.clUpdateMutableCommandsKHR(recorded_.buffer.get(), &base);
            if (err != CL_SUCCESS)
                return fail(clFailure("clUpdateMutableCommandsKHR", err,
                                      fmt::format("{} dispatches", dispatches_.size())));
        }
        return submit(recorded_);
    }

private:
    RecordedBuffer recorded_;
    std::vector<cl_mutable_command_khr> commands_; // one per dispatch, owned by the buffer
    // Kept to build each frame's update without allocating.
    std::vector<cl_mutable_dispatch_arg_khr> args_;
    std::vector<cl_mutable_dispatch_config_khr> configs_;
};

// Mutable dispatch needs the extension, its entry point and argument updates among
// the fields the device can update.
bool argumentsMutable(const GpuContext& gpu)
{
    return gpu.capabilities().command_buffer_mutable_dispatch && gpu.vendor().clUpdateMutableCommandsKHR &&
           (deviceBits(gpu.device(), CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR) &
            CL_MUTABLE_DISPATCH_ARGUMENTS_KHR);
}

} // namespace

Result<std::unique_ptr<Replay>> makeCommandBufferReplay(const GpuContext& gpu, uint32_t home_lane,
                                                        std::vector<ReplayDispatch> dispatches,
                                                        const std::vector<ArgUpdate>& initial)
{
    if (argumentsMutable(gpu)) {
        if (auto set = setArguments(dispatches, initial); !set)
            return tl::unexpected(set.error());
        auto replay = std::make_unique<MutableCommandBuffer>(gpu, home_lane, std::move(dispatches));
        if (auto recorded = replay->recordOnce(); !recorded)
            return tl::unexpected(recorded.error());
        return replay;
    }

    // Record the initial arguments' buffer now, so that a device refusing command
    // buffers fails while the session opens, not at its first frame.
    auto replay = std::make_unique<CachedCommandBuffers>(gpu, home_lane, std::move(dispatches));
    if (auto recorded = replay->find(initial); !recorded)
        return tl::unexpected(recorded.error());
    return replay;
}

} // namespace framecl::gpu::replay_detail
