// The C API of include/framecl/client.h: argument checks, and the boundary no C++
// exception crosses (docs/architecture.md, "Errors, logs and ownership").

#include "base/abi_enum.hpp"
#include "buffer_allocation.hpp"
#include "framecl_client.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <new>
#include <string>

// The library is built with hidden visibility: only what is marked here is its ABI
// (libframecl.map keeps it that way for the code linked in statically).
#define FRAMECL_EXPORT extern "C" __attribute__((visibility("default")))

using namespace framecl::clientlib;

namespace {

// The connection timeout and request timeout when the options give none.
constexpr int default_timeout_ms = 5000;

// The error of the calls that take no client (framecl_last_error(NULL)).
thread_local std::string clientless_error;

int clientlessFailure(int error, std::string message)
{
    clientless_error = std::move(message);
    return -error;
}

// Runs `call`, turning what may still be thrown (allocation, ZeroMQ) into an errno.
template <typename Call> int guarded(framecl_client* client, Call&& call)
{
    Failure failure{0, {}};
    try {
        return call();
    } catch (const std::bad_alloc&) {
        failure = {ENOMEM, "out of memory"};
    } catch (const zmq::error_t& error) {
        failure = {error.num(), fmt::format("ZeroMQ: {}", error.what())};
    } catch (const std::exception& error) {
        failure = {EIO, error.what()};
    }
    if (!client) return clientlessFailure(failure.error, failure.message);
    return client->fail(failure);
}

Outcome<ParameterOverride> parameterOverride(const framecl_parameter& parameter)
{
    if (!parameter.key) return failure(EINVAL, "a parameter override has no key");
    const std::optional<framecl_parameter_type> type = framecl::abiEnum(parameter.type, FRAMECL_PARAM_STRING);
    if (!type)
        return failure(EINVAL, fmt::format("parameter override {} has an unknown type {}", parameter.key,
                                           framecl::abiInteger(parameter.type)));
    ParameterOverride result{parameter.key, *type, 0, 0.0, false, {}};
    switch (*type) {
    case FRAMECL_PARAM_INT:
        result.int_value = parameter.int_value;
        return result;
    case FRAMECL_PARAM_FLOAT:
        result.float_value = parameter.float_value;
        return result;
    case FRAMECL_PARAM_BOOL:
        result.bool_value = parameter.bool_value != 0;
        return result;
    case FRAMECL_PARAM_STRING:
        if (!parameter.string_value)
            return failure(EINVAL,
                           fmt::format("parameter override {} has no string value", parameter.key));
        result.string_value = parameter.string_value;
        return result;
    }
    return result; // not reached: every type returns above
}

// What the protocol allows a trace window to be (framecl.fbs, TraceRequest).
constexpr uint32_t min_trace_seconds = 1;
constexpr uint32_t max_trace_seconds = 60;

} // namespace

FRAMECL_EXPORT int framecl_connect(const framecl_connect_options* options, framecl_client** client)
{
    if (!client) return clientlessFailure(EINVAL, "framecl_connect: client is NULL");
    *client = nullptr;
    return guarded(nullptr, [&] {
        const char* environment = std::getenv("FRAMECL_SOCKET");
        std::string path = FRAMECL_DEFAULT_SOCKET;
        if (options && options->socket_path && *options->socket_path)
            path = options->socket_path;
        else if (environment && *environment)
            path = environment;
        if (path.find("://") != std::string::npos)
            return clientlessFailure(
                EINVAL, fmt::format("{} is an endpoint, not a socket path: framecl connects to "
                                    "ipc:// paths only (give the path alone)",
                                    path));
        const std::string name = options && options->client_name ? options->client_name : "framecl";
        const int timeout_ms =
            options && options->timeout_ms > 0 ? options->timeout_ms : default_timeout_ms;

        auto connected = framecl_client::connect(path, name, std::chrono::milliseconds(timeout_ms));
        if (!connected) return clientlessFailure(connected.error().error, connected.error().message);
        *client = connected->release();
        return 0;
    });
}

FRAMECL_EXPORT void framecl_disconnect(framecl_client* client)
{
    delete client;
}

FRAMECL_EXPORT void framecl_set_status_callback(framecl_client* client, framecl_status_callback callback,
                                                void* user_data)
{
    if (client)
        client->setStatusCallback(callback, user_data);
}

FRAMECL_EXPORT const char* framecl_last_error(const framecl_client* client)
{
    return client ? client->lastError().c_str() : clientless_error.c_str();
}

FRAMECL_EXPORT int framecl_allocate_buffer(const framecl_allocate_options* options, uint64_t size,
                                           framecl_buffer_source* used)
{
    return guarded(nullptr, [&] {
        const std::optional<framecl_buffer_source> source =
            options ? framecl::abiEnum(options->source, FRAMECL_BUFFERS_MEMFD) : FRAMECL_BUFFERS_AUTO;
        if (!source)
            return clientlessFailure(EINVAL,
                                     fmt::format("unknown buffer source {}", framecl::abiInteger(options->source)));
        auto buffer = allocateBuffer(*source, options ? options->device : nullptr, size);
        if (!buffer) return clientlessFailure(buffer.error().error, buffer.error().message);
        if (used) *used = buffer->source;
        return buffer->fd.release();
    });
}

FRAMECL_EXPORT const char* framecl_buffer_source_name(framecl_buffer_source source)
{
    const std::optional<framecl_buffer_source> known = framecl::abiEnum(source, FRAMECL_BUFFERS_MEMFD);
    if (!known)
        return nullptr;
    switch (*known) {
    case FRAMECL_BUFFERS_AUTO:
        return "auto";
    case FRAMECL_BUFFERS_DMA_HEAP:
        return "dma-heap";
    case FRAMECL_BUFFERS_DRM:
        return "drm";
    case FRAMECL_BUFFERS_MEMFD:
        return "memfd";
    }
    return nullptr;
}

FRAMECL_EXPORT int framecl_begin_cpu_access(int fd, unsigned flags)
{
    const auto synced = syncCpuAccess(fd, flags, true);
    return synced ? 0 : clientlessFailure(synced.error().error, synced.error().message);
}

FRAMECL_EXPORT int framecl_end_cpu_access(int fd, unsigned flags)
{
    const auto synced = syncCpuAccess(fd, flags, false);
    return synced ? 0 : clientlessFailure(synced.error().error, synced.error().message);
}

FRAMECL_EXPORT int framecl_fd(const framecl_client* client)
{
    return client ? client->pollFd() : -EINVAL;
}

FRAMECL_EXPORT const char* framecl_device(const framecl_client* client)
{
    return client ? client->daemon().device.c_str() : nullptr;
}

FRAMECL_EXPORT size_t framecl_pipeline_count(const framecl_client* client)
{
    return client ? client->daemon().pipelines.size() : 0;
}

FRAMECL_EXPORT const char* framecl_pipeline_name(const framecl_client* client, size_t index)
{
    if (!client || index >= client->daemon().pipelines.size()) return nullptr;
    return client->daemon().pipelines[index].name.c_str();
}

FRAMECL_EXPORT size_t framecl_pipeline_stage_count(const framecl_client* client, size_t index)
{
    if (!client || index >= client->daemon().pipelines.size()) return 0;
    return client->daemon().pipelines[index].stages.size();
}

FRAMECL_EXPORT const char* framecl_pipeline_stage(const framecl_client* client, size_t index,
                                                  size_t stage)
{
    if (!client || index >= client->daemon().pipelines.size()) return nullptr;
    const auto& stages = client->daemon().pipelines[index].stages;
    return stage < stages.size() ? stages[stage].c_str() : nullptr;
}

FRAMECL_EXPORT const char* framecl_pipeline_recording(const framecl_client* client, size_t index)
{
    if (!client || index >= client->daemon().pipelines.size()) return nullptr;
    return client->daemon().pipelines[index].recording.c_str();
}

FRAMECL_EXPORT size_t framecl_pipeline_tuned_count(const framecl_client* client, size_t index)
{
    if (!client || index >= client->daemon().pipelines.size()) return 0;
    return client->daemon().pipelines[index].tuned.size();
}

FRAMECL_EXPORT size_t framecl_pipeline_fusion_count(const framecl_client* client, size_t index)
{
    if (!client || index >= client->daemon().pipelines.size()) return 0;
    return client->daemon().pipelines[index].fusion.size();
}

FRAMECL_EXPORT const char* framecl_pipeline_fusion(const framecl_client* client, size_t index, size_t line)
{
    if (!client || index >= client->daemon().pipelines.size()) return nullptr;
    const auto& fusion = client->daemon().pipelines[index].fusion;
    return line < fusion.size() ? fusion[line].c_str() : nullptr;
}

FRAMECL_EXPORT const char* framecl_pipeline_tuned(const framecl_client* client, size_t index, size_t line)
{
    if (!client || index >= client->daemon().pipelines.size()) return nullptr;
    const auto& tuned = client->daemon().pipelines[index].tuned;
    return line < tuned.size() ? tuned[line].c_str() : nullptr;
}

FRAMECL_EXPORT int framecl_register_buffer(framecl_client* client, int fd,
                                           const framecl_frame_layout* layout, uint32_t* id)
{
    if (!client) return -EINVAL;
    if (!layout || !id)
        return client->fail({EINVAL, "framecl_register_buffer: layout and id must not be NULL"});
    return guarded(client, [&] { return client->registerBuffer(fd, *layout, id); });
}

FRAMECL_EXPORT int framecl_release_buffer(framecl_client* client, uint32_t id)
{
    if (!client) return -EINVAL;
    return guarded(client, [&] { return client->releaseBuffer(id); });
}

FRAMECL_EXPORT int framecl_open_session(framecl_client* client, const char* pipeline,
                                        uint32_t fourcc, uint32_t width, uint32_t height,
                                        const framecl_parameter* overrides, size_t override_count,
                                        uint32_t* session, framecl_frame_layout* output)
{
    return framecl_open_session_with(client, pipeline, fourcc, width, height, overrides,
                                     override_count, nullptr, session, output);
}

FRAMECL_EXPORT int framecl_open_session_with(framecl_client* client, const char* pipeline,
                                             uint32_t fourcc, uint32_t width, uint32_t height,
                                             const framecl_parameter* overrides,
                                             size_t override_count,
                                             const framecl_session_options* options,
                                             uint32_t* session, framecl_frame_layout* output)
{
    if (!client) return -EINVAL;
    if (!pipeline || !session || (override_count && !overrides))
        return client->fail(
            {EINVAL, "framecl_open_session: pipeline, session and overrides must not be NULL"});
    if (options && !framecl::abiEnum(options->backpressure, FRAMECL_BACKPRESSURE_DROP_OLDEST))
        return client->fail({EINVAL, fmt::format("framecl_open_session: unknown backpressure {}",
                                                 framecl::abiInteger(options->backpressure))});
    return guarded(client, [&] {
        SessionRequest request{pipeline, fourcc, width, height, {}};
        if (options) request.options = *options;
        for (size_t i = 0; i < override_count; ++i) {
            auto parameter = parameterOverride(overrides[i]);
            if (!parameter) return client->fail(parameter.error());
            request.overrides.push_back(std::move(*parameter));
        }
        return client->openSession(std::move(request), session, output);
    });
}

FRAMECL_EXPORT int framecl_close_session(framecl_client* client, uint32_t session)
{
    if (!client) return -EINVAL;
    return guarded(client, [&] { return client->closeSession(session); });
}

FRAMECL_EXPORT int framecl_submit(framecl_client* client, uint32_t session, uint32_t input_buffer,
                                  uint32_t output_buffer, uint64_t sequence)
{
    if (!client) return -EINVAL;
    return guarded(client,
                   [&] { return client->submit(session, input_buffer, output_buffer, sequence); });
}

FRAMECL_EXPORT int framecl_submit_fenced(framecl_client* client, uint32_t session,
                                         uint32_t input_buffer, uint32_t output_buffer,
                                         uint64_t sequence, int acquire_fence, int* release_fence)
{
    if (!client) return -EINVAL;
    return guarded(client, [&] {
        return client->submit(session, input_buffer, output_buffer, sequence, acquire_fence,
                              release_fence);
    });
}

FRAMECL_EXPORT int framecl_submit_with_parameters(framecl_client* client, uint32_t session,
                                                  uint32_t input_buffer, uint32_t output_buffer,
                                                  uint64_t sequence, int acquire_fence, int* release_fence,
                                                  const framecl_frame_parameter* parameters,
                                                  size_t parameter_count)
{
    if (!client) return -EINVAL;
    if (parameter_count > 0 && !parameters) return -EINVAL;
    return guarded(client, [&] {
        return client->submit(session, input_buffer, output_buffer, sequence, acquire_fence,
                              release_fence, {parameters, parameter_count});
    });
}

FRAMECL_EXPORT int framecl_offers_release_fences(const framecl_client* client)
{
    return client && client->daemon().release_fences ? 1 : 0;
}

FRAMECL_EXPORT int framecl_next_done(framecl_client* client, int timeout_ms, framecl_done* done)
{
    if (!client) return -EINVAL;
    if (!done) return client->fail({EINVAL, "framecl_next_done: done must not be NULL"});
    return guarded(client, [&] { return client->nextDone(timeout_ms, done); });
}

FRAMECL_EXPORT int framecl_done_statistics(const framecl_client* client, framecl_statistics* statistics)
{
    if (!client || !statistics) return -EINVAL;
    const auto& last = client->doneStatistics();
    if (!last) return -ENODATA;
    *statistics = *last;
    return 0;
}

FRAMECL_EXPORT int framecl_stats(framecl_client* client, char** json)
{
    if (!client) return -EINVAL;
    if (!json) return client->fail({EINVAL, "framecl_stats: json must not be NULL"});
    return guarded(client, [&] {
        std::string text;
        if (const int error = client->stats(&text); error < 0) return error;
        *json = strdup(text.c_str());
        return *json ? 0 : client->fail({ENOMEM, "out of memory"});
    });
}

FRAMECL_EXPORT int framecl_trace(framecl_client* client, uint32_t seconds, char** json)
{
    if (!client) return -EINVAL;
    if (!json) return client->fail({EINVAL, "framecl_trace: json must not be NULL"});
    if (seconds < min_trace_seconds || seconds > max_trace_seconds)
        return client->fail({EINVAL, fmt::format("framecl_trace: seconds must be {} to {}, not {}",
                                                 min_trace_seconds, max_trace_seconds, seconds)});
    return guarded(client, [&] {
        std::string text;
        if (const int error = client->trace(seconds, &text); error < 0) return error;
        *json = strdup(text.c_str());
        return *json ? 0 : client->fail({ENOMEM, "out of memory"});
    });
}
