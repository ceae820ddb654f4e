// libframecl for C++: a thin RAII layer over the C API of <framecl/client.h>, whose
// comments remain the reference for what each call does.
//
// Failures throw framecl::ClientError, which carries the errno and the library's
// text. The exceptions are made here, in the application's code, from the C API's
// return values: none crosses the library's C boundary.
//
//     auto client = framecl::Client::connect({.client_name = "camera-preview"});
//     auto session = client.openSession("denoise-edges", DRM_FORMAT_NV12, 1920, 1080);
//     uint32_t in = client.registerBuffer(camera_fd, camera_layout);
//     uint32_t out = client.registerBuffer(output_fd, session.output);
//     client.submit(session.id, in, out, 1);
//     if (auto done = client.nextDone(100); done && done->status == FRAMECL_FRAME_OK)
//         ...
//
// Like a framecl_client, a Client is used from one thread at a time.
#ifndef FRAMECL_CLIENT_HPP
#define FRAMECL_CLIENT_HPP

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <framecl/client.h>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace framecl {

// A numeric parameter of one stage, changed from a frame on (framecl_frame_parameter):
// {2, "gains", {1.9, 1.0, 1.6}}.
struct FrameParameter {
    uint32_t stage; // from 1, as `framecl pipelines` numbers them
    std::string key;
    std::vector<double> values;
};

// A failed call: error() is the errno (ENOENT, ETIMEDOUT, ...) whose negative the C
// API returned, what() the text framecl_last_error() gave.
class ClientError : public std::runtime_error {
  public:
    ClientError(int error, const std::string& message) : std::runtime_error(message), error_(error)
    {
    }
    int error() const noexcept { return error_; }

  private:
    int error_;
};

// framecl_connect_options with owned strings; empty means "not given".
struct ConnectOptions {
    // The {} let callers name only some fields ({.client_name = "camera-preview"})
    // without -Wmissing-field-initializers.
    std::string socket_path{}; // empty: $FRAMECL_SOCKET, else FRAMECL_DEFAULT_SOCKET
    std::string client_name{}; // empty: "framecl"
    int timeout_ms = 0;        // <= 0: 5000
};

// An open session: its id, and the layout its output buffers must have (or larger
// strides).
struct Session {
    uint32_t id;
    framecl_frame_layout output;
};

// A pipeline the daemon offers, as Welcome listed it.
struct Pipeline {
    std::string name;
    std::vector<std::string> stages; // "plugin" or "plugin op=..."
    std::vector<std::string> tuned;  // the tuner's choices on the daemon's device
};

class Client {
  public:
    // Connects and says Hello (framecl_connect()).
    static Client connect(const ConnectOptions& options = {})
    {
        const framecl_connect_options c_options{
            options.socket_path.empty() ? nullptr : options.socket_path.c_str(),
            options.client_name.empty() ? nullptr : options.client_name.c_str(),
            options.timeout_ms};
        framecl_client* client = nullptr;
        if (const int error = framecl_connect(&c_options, &client); error < 0)
            throw ClientError(-error, framecl_last_error(nullptr));
        return Client(client);
    }

    // The C handle, for calls this layer does not wrap. Still owned by the Client.
    framecl_client* get() const noexcept { return client_.get(); }

    // The fd to poll for POLLIN; then call nextDone(0) until it returns nothing
    // (framecl_fd()).
    int fd() const { return check(framecl_fd(client_.get())); }

    // The OpenCL device the daemon uses.
    std::string device() const
    {
        const char* device = framecl_device(client_.get());
        return device ? device : "";
    }

    // The pipelines the daemon offers, copied.
    std::vector<Pipeline> pipelines() const
    {
        std::vector<Pipeline> pipelines;
        for (size_t p = 0; p < framecl_pipeline_count(client_.get()); ++p) {
            Pipeline pipeline{framecl_pipeline_name(client_.get(), p), {}, {}};
            for (size_t s = 0; s < framecl_pipeline_stage_count(client_.get(), p); ++s)
                pipeline.stages.emplace_back(framecl_pipeline_stage(client_.get(), p, s));
            for (size_t t = 0; t < framecl_pipeline_tuned_count(client_.get(), p); ++t)
                pipeline.tuned.emplace_back(framecl_pipeline_tuned(client_.get(), p, t));
            pipelines.push_back(std::move(pipeline));
        }
        return pipelines;
    }

    // Registers a buffer; the library keeps its own duplicate of `fd`. Returns its id
    // (framecl_register_buffer()).
    uint32_t registerBuffer(int fd, const framecl_frame_layout& layout)
    {
        uint32_t id = 0;
        check(framecl_register_buffer(client_.get(), fd, &layout, &id));
        return id;
    }
    void releaseBuffer(uint32_t id) { check(framecl_release_buffer(client_.get(), id)); }

    // Opens a session of `pipeline` for input frames of `fourcc`, `width` x `height`
    // (framecl_open_session_with(); the default options block and set no deadline).
    Session openSession(const std::string& pipeline, uint32_t fourcc, uint32_t width,
                        uint32_t height, std::span<const framecl_parameter> overrides = {},
                        const framecl_session_options& options = {FRAMECL_BACKPRESSURE_BLOCK, 0})
    {
        Session session{};
        check(framecl_open_session_with(client_.get(), pipeline.c_str(), fourcc, width, height,
                                        overrides.data(), overrides.size(), &options, &session.id,
                                        &session.output));
        return session;
    }
    void closeSession(uint32_t session) { check(framecl_close_session(client_.get(), session)); }

    // Queues one frame (framecl_submit()); with `acquire_fence`, a sync_file the frame
    // starts after (framecl_submit_fenced()).
    void submit(uint32_t session, uint32_t input_buffer, uint32_t output_buffer, uint64_t sequence,
                int acquire_fence = -1)
    {
        check(framecl_submit_fenced(client_.get(), session, input_buffer, output_buffer, sequence,
                                    acquire_fence, nullptr));
    }
    // Queues one frame and returns its release fence, a sync_file the caller closes (-1:
    // the frame was refused at once; its done says why). framecl_submit_fenced().
    int submitForFence(uint32_t session, uint32_t input_buffer, uint32_t output_buffer,
                       uint64_t sequence, int acquire_fence = -1)
    {
        int release_fence = -1;
        check(framecl_submit_fenced(client_.get(), session, input_buffer, output_buffer, sequence,
                                    acquire_fence, &release_fence));
        return release_fence;
    }
    // Queues one frame with which, and with every later frame of the session,
    // `parameters` change (framecl_submit_with_parameters()).
    void submit(uint32_t session, uint32_t input_buffer, uint32_t output_buffer, uint64_t sequence,
                std::span<const FrameParameter> parameters, int acquire_fence = -1)
    {
        std::vector<framecl_frame_parameter> c_parameters;
        for (const FrameParameter& parameter : parameters)
            c_parameters.push_back(
                {parameter.stage, parameter.key.c_str(), parameter.values.data(), parameter.values.size()});
        check(framecl_submit_with_parameters(client_.get(), session, input_buffer, output_buffer, sequence,
                                             acquire_fence, nullptr, c_parameters.data(), c_parameters.size()));
    }
    // The statistics of the frame whose done nextDone() returned last, if it brought any
    // (framecl_done_statistics()).
    std::optional<framecl_statistics> doneStatistics() const
    {
        framecl_statistics statistics;
        if (framecl_done_statistics(client_.get(), &statistics) != 0) return std::nullopt;
        return statistics;
    }
    bool offersReleaseFences() const { return framecl_offers_release_fences(client_.get()) == 1; }

    // The next done, or nothing if none came within `timeout_ms` (0: do not wait, -1:
    // wait forever). Throws for the other failures, -ENOTCONN among them
    // (framecl_next_done()).
    std::optional<framecl_done> nextDone(int timeout_ms)
    {
        framecl_done done;
        const int result = framecl_next_done(client_.get(), timeout_ms, &done);
        if (result == -EAGAIN || result == -ETIMEDOUT) return std::nullopt;
        check(result);
        return done;
    }

    // The daemon's statistics as JSON (framecl_stats()).
    std::string stats()
    {
        char* json = nullptr;
        check(framecl_stats(client_.get(), &json));
        const std::unique_ptr<char, decltype(&std::free)> owned(json, &std::free);
        return std::string(json);
    }

    // The daemon's GPU work of the next `seconds` (1 to 60) as Chrome trace JSON
    // (framecl_trace()).
    std::string trace(uint32_t seconds)
    {
        char* json = nullptr;
        check(framecl_trace(client_.get(), seconds, &json));
        const std::unique_ptr<char, decltype(&std::free)> owned(json, &std::free);
        return std::string(json);
    }

  private:
    struct Disconnect {
        void operator()(framecl_client* client) const noexcept { framecl_disconnect(client); }
    };

    explicit Client(framecl_client* client) : client_(client) {}

    int check(int result) const
    {
        if (result < 0) throw ClientError(-result, framecl_last_error(client_.get()));
        return result;
    }

    std::unique_ptr<framecl_client, Disconnect> client_; // framecl_disconnect() at destruction
};

} // namespace framecl

#endif // FRAMECL_CLIENT_HPP
