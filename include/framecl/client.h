/* libframecl: the client library of framecld.
 *
 * A camera process connects once, registers a small pool of dma-buf (or sealed
 * memfd) buffers once, opens a session on a pipeline, then submits frames naming an
 * input and an output buffer; the daemon answers each submit with one "done". No
 * pixel crosses the socket: buffers are shared by fd (docs/protocol.md).
 *
 * Threading: a framecl_client is used from one thread at a time.
 * Errors: functions return 0 or a negative errno; framecl_last_error() then says
 * what went wrong in words. */
#ifndef FRAMECL_CLIENT_H
#define FRAMECL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <framecl/format.h>
#include <framecl/statistics.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct framecl_client framecl_client;

/* Where the daemon listens when neither the options nor $FRAMECL_SOCKET say. */
#define FRAMECL_DEFAULT_SOCKET "/run/framecl/framecl.sock"

struct framecl_connect_options {
    const char* socket_path; /* NULL: $FRAMECL_SOCKET, else FRAMECL_DEFAULT_SOCKET */
    const char* client_name; /* matched by [[client_class]] match_name; NULL: "framecl" */
    int timeout_ms;          /* for the connection and for every request; <= 0: 5000 */
};

/* Connects and says Hello. On failure *client is NULL and the error text is
 * available through framecl_last_error(NULL) on this thread. */
int framecl_connect(const struct framecl_connect_options* options, framecl_client** client);

/* Says Goodbye and frees everything, the library's duplicates of registered fds
 * included. Frames still in flight are abandoned. NULL is allowed. */
void framecl_disconnect(framecl_client* client);

/* The last error's text; for NULL, the last failure of the thread's calls that take
 * no client (framecl_connect(), framecl_allocate_buffer(), the CPU-access calls). */
const char* framecl_last_error(const framecl_client* client);

/* Called, on the calling thread, with what the daemon is doing while a call waits for
 * a session to be opened (framecl_open_session() and the reopening after a restart):
 * "tuning stage 2 of 3 (epsilon radius=4 threshold=20) for R8 3264x2448: candidate 1
 * of 34", each new status once. The daemon repeats the status every second while it
 * works, and each repetition starts the call's timeout again. NULL: none (the default). */
typedef void (*framecl_status_callback)(void* user_data, const char* status);
void framecl_set_status_callback(framecl_client* client, framecl_status_callback callback, void* user_data);

/* An fd to poll for POLLIN: readable when a done (or a daemon restart) may be waiting.
 * Then call framecl_next_done() with timeout 0 until it returns -EAGAIN (or another
 * error: -ENOTCONN once the daemon has gone away). The fd stays the same for the
 * client's life, across reconnections; the library closes it. */
int framecl_fd(const framecl_client* client);

/* The OpenCL device the daemon uses, as Welcome said. This text and those of the
 * pipeline functions below are refreshed when the library reconnects after a daemon
 * restart: they stay valid until the next call that talks to the daemon. */
const char* framecl_device(const framecl_client* client);

/* The pipelines the daemon offers: their count, and each one's name and stages
 * ("plugin" or "plugin op=..."), as Welcome listed them. */
size_t framecl_pipeline_count(const framecl_client* client);
const char* framecl_pipeline_name(const framecl_client* client, size_t index);
size_t framecl_pipeline_stage_count(const framecl_client* client, size_t index);
const char* framecl_pipeline_stage(const framecl_client* client, size_t index, size_t stage);
/* How a session of pipeline `index` replays its frames on the daemon's device: "qcom"
 * (recordable queues), "khr" (command buffers) or "off" (dispatch by dispatch). */
const char* framecl_pipeline_recording(const framecl_client* client, size_t index);
/* What the daemon's tuner chose for the stages of pipeline `index` on its device, one
 * line per stage and frame size tuned so far ("stage 2 (epsilon) on R8 1920x1080:
 * variant branchless, work group 16x16, 0.412 ms"); none with gpu.tuning = off. */
size_t framecl_pipeline_tuned_count(const framecl_client* client, size_t index);
const char* framecl_pipeline_tuned(const framecl_client* client, size_t index, size_t line);
/* Which stages of pipeline `index` the daemon runs as one kernel (docs/architecture.md,
 * "Fusion"), one line per answer over the input formats: "stages 2-5 (demosaic, ccm,
 * tone, color) as one kernel for SRGGB8, SRGGB10, ...", or "off (fuse = false)"; none
 * where nothing fuses (and from a daemon older than fusion). */
size_t framecl_pipeline_fusion_count(const framecl_client* client, size_t index);
const char* framecl_pipeline_fusion(const framecl_client* client, size_t index, size_t line);

/* Frame buffers for a process without an allocator of its own. The daemon takes
 * dma-bufs (imported without a copy where the device can) and sealed memfds. */
enum framecl_buffer_source {
    /* A dma-buf from the DMA-BUF heap /dev/dma_heap/<device> (NULL: "system") where
     * that heap exists and this process may open it; a sealed memfd otherwise. */
    FRAMECL_BUFFERS_AUTO = 0,
    /* A dma-buf from the DMA-BUF heap /dev/dma_heap/<device> (NULL: "system"). */
    FRAMECL_BUFFERS_DMA_HEAP = 1,
    /* A dumb buffer of the DRM device node <device>, exported as a dma-buf (PRIME);
     * NULL: the first /dev/dri/card* of the vgem driver (a software exporter, for
     * machines without a heap). Needs access to the node. */
    FRAMECL_BUFFERS_DRM = 2,
    /* A memfd sealed against shrinking and growing, as the daemon requires. */
    FRAMECL_BUFFERS_MEMFD = 3,
};

struct framecl_allocate_options {
    enum framecl_buffer_source source;
    const char* device; /* the heap's name or the DRM node, as above */
};

/* Allocates a zeroed buffer of at least `size` bytes (framecl_layout_end() of the
 * layout it will hold) and returns its fd, close-on-exec and the caller's to close, or
 * a negative errno; framecl_last_error(NULL) then says why. NULL options: AUTO. *used
 * (if not NULL) says where the buffer came from, never FRAMECL_BUFFERS_AUTO. No client
 * is needed; register the fd with framecl_register_buffer(). */
int framecl_allocate_buffer(const struct framecl_allocate_options* options, uint64_t size,
                            enum framecl_buffer_source* used);
/* "auto", "dma-heap", "drm", "memfd"; NULL for another value. */
const char* framecl_buffer_source_name(enum framecl_buffer_source source);

/* The CPU's reads and writes through a buffer's mmap go between these two calls, with
 * the same flags: for a dma-buf they are DMA_BUF_IOCTL_SYNC START and END, which keep
 * the CPU's caches coherent with the device; for a memfd they do nothing. Bracket
 * writing an input before its submit, and reading an output after its done. 0 or a
 * negative errno (framecl_last_error(NULL) says why). */
#define FRAMECL_CPU_READ 1u
#define FRAMECL_CPU_WRITE 2u
int framecl_begin_cpu_access(int fd, unsigned flags);
int framecl_end_cpu_access(int fd, unsigned flags);

/* Registers a buffer holding frames of `layout`. The library keeps a duplicate of
 * `fd` (the caller keeps its own) so that it can register the buffer again after a
 * daemon restart. *id names the buffer in later calls. */
int framecl_register_buffer(framecl_client* client, int fd, const struct framecl_frame_layout* layout,
                            uint32_t* id);
int framecl_release_buffer(framecl_client* client, uint32_t id);

/* A pipeline parameter override; exactly one value is used, chosen by `type`. */
enum framecl_parameter_type { FRAMECL_PARAM_INT, FRAMECL_PARAM_FLOAT, FRAMECL_PARAM_BOOL, FRAMECL_PARAM_STRING };
struct framecl_parameter {
    const char* key;
    enum framecl_parameter_type type;
    int64_t int_value;
    double float_value;
    int bool_value;
    const char* string_value;
};

/* What a submit meets when the client already has the daemon's
 * limits.max_inflight_per_client frames in flight (docs/protocol.md, Backpressure). */
enum framecl_backpressure {
    /* The submit waits in the daemon until a frame of the client ends; the daemon holds
     * at most that many more, and answers submits beyond with FRAMECL_FRAME_BUSY. */
    FRAMECL_BACKPRESSURE_BLOCK = 0,
    /* Done with FRAMECL_FRAME_BUSY at once. */
    FRAMECL_BACKPRESSURE_REJECT = 1,
    /* The session's oldest frame not yet started ends FRAMECL_FRAME_DROPPED, and the new
     * one is queued; with none of the session's frames waiting to start, the new one
     * ends FRAMECL_FRAME_BUSY. */
    FRAMECL_BACKPRESSURE_DROP_OLDEST = 2,
};

struct framecl_session_options {
    enum framecl_backpressure backpressure;
    /* A frame not started this many microseconds after its submit reached the daemon
     * ends FRAMECL_FRAME_DROPPED; 0: no deadline. */
    uint32_t deadline_us;
};

/* Opens a session of `pipeline` for frames of `fourcc`, `width` x `height`. On success
 * *session names it and *output (if not NULL) holds the output format and size, with
 * tightly packed planes: register output buffers of that layout (or with larger
 * strides). Its frames meet FRAMECL_BACKPRESSURE_BLOCK and have no deadline. */
int framecl_open_session(framecl_client* client, const char* pipeline, uint32_t fourcc, uint32_t width,
                         uint32_t height, const struct framecl_parameter* overrides, size_t override_count,
                         uint32_t* session, struct framecl_frame_layout* output);
/* framecl_open_session() with `options` (NULL: block, no deadline). A session reopened
 * after a daemon restart keeps its options. An unknown backpressure is -EINVAL. */
int framecl_open_session_with(framecl_client* client, const char* pipeline, uint32_t fourcc, uint32_t width,
                              uint32_t height, const struct framecl_parameter* overrides,
                              size_t override_count, const struct framecl_session_options* options,
                              uint32_t* session, struct framecl_frame_layout* output);
int framecl_close_session(framecl_client* client, uint32_t session);

/* Queues one frame; returns at once. Exactly one done follows for each successful
 * submit, carrying `sequence`. Returns -ENOTCONN if the daemon is gone and could not
 * be reached again within the timeout. */
int framecl_submit(framecl_client* client, uint32_t session, uint32_t input_buffer, uint32_t output_buffer,
                   uint64_t sequence);
/* framecl_submit() with fences (docs/protocol.md, Fences).
 *
 * `acquire_fence` is a sync_file (from a producer's DMA_BUF_IOCTL_EXPORT_SYNC_FILE, a
 * GPU driver, a V4L2 or DRM fence) that signals when the input is written: the daemon
 * receives its own copy and starts the frame once it has signalled, without any thread
 * waiting; the caller keeps and closes its fd. A fence that signals an error fails the
 * frame, and one still pending at the session's deadline or after the daemon's
 * limits.max_fence_wait_ms ends it. -1: none. -EBADF for an fd that is not open; one
 * that is no sync_file comes back as a failed done.
 *
 * `release_fence` (NULL: none wanted) asks for a sync_file that signals once the frame
 * has ended and its output is complete, and waits for the daemon to accept the frame
 * (a round trip, not the frame's run): *release_fence is then that fd, the caller's to
 * close, to hand on with the output to its next consumer before the done comes; -1
 * where the frame was refused at once (its done says why). Where the device cannot make
 * them (framecl_offers_release_fences() is 0) the frame fails. The fence signals
 * however the frame ends: the done says whether the output is valid. */
int framecl_submit_fenced(framecl_client* client, uint32_t session, uint32_t input_buffer,
                          uint32_t output_buffer, uint64_t sequence, int acquire_fence,
                          int* release_fence);
/* A numeric parameter of one stage of a session's pipeline, changed from a frame on
 * (docs/protocol.md, "Parameters per frame"). */
struct framecl_frame_parameter {
    uint32_t stage;        /* as `framecl pipelines` numbers the stages: from 1 */
    const char* key;       /* as the pipeline's config names it: "gains" */
    const double* values;  /* one number for an integer or real parameter; a list's values */
    size_t value_count;
};

/* framecl_submit_fenced() whose frame, and every later frame of the session, runs with
 * `parameters` changed, without the session being opened again: what a camera's 3A
 * loop does to white-balance gains, a colour matrix or a black level every few frames.
 * Only numeric parameters held in a stage's parameter block change so
 * (docs/plugin-guide.md, "Parameter blocks"); the daemon checks them as it checks a
 * config, and a value it refuses (an unknown key, out of range, one that would change
 * the stage's dispatches) fails this frame, with a done that names it, and changes
 * nothing. Frames submitted before run with the values before, whatever their order on
 * the GPU. The library sends the values again with the first submit to a session opened
 * again after a daemon restart. -EMSGSIZE where they do not fit one packet (64 KiB). */
int framecl_submit_with_parameters(framecl_client* client, uint32_t session, uint32_t input_buffer,
                                   uint32_t output_buffer, uint64_t sequence, int acquire_fence,
                                   int* release_fence, const struct framecl_frame_parameter* parameters,
                                   size_t parameter_count);
/* 1 where the daemon's device can make release fences
 * (cl_khr_external_semaphore_sync_fd), else 0. */
int framecl_offers_release_fences(const framecl_client* client);

enum framecl_frame_status {
    FRAMECL_FRAME_OK = 0,
    FRAMECL_FRAME_FAILED = 1,  /* see `error` */
    FRAMECL_FRAME_DROPPED = 2, /* not started: past its deadline, or pushed out by a newer
                                * frame (FRAMECL_BACKPRESSURE_DROP_OLDEST) */
    FRAMECL_FRAME_BUSY = 3,    /* refused: too many frames in flight (framecl_backpressure) */
    FRAMECL_FRAME_LOST = 4,    /* the daemon went away while the frame was in flight */
};

#define FRAMECL_MAX_STAGES 16

struct framecl_stage_time {
    char stage[64];
    uint64_t gpu_ns;
};

struct framecl_done {
    uint32_t session;
    uint64_t sequence;
    enum framecl_frame_status status;
    char error[256];
    /* The daemon's CLOCK_MONOTONIC (the same clock as the caller's on one machine): */
    uint64_t queued_ns; /* the submit reached the daemon */
    uint64_t start_ns;  /* the frame's GPU work was enqueued */
    uint64_t end_ns;    /* the daemon saw it complete, just before sending this done */
    uint32_t stage_count;
    struct framecl_stage_time stages[FRAMECL_MAX_STAGES];
    /* For a frame that ran, where its time went (0 where unknown): */
    uint64_t gpu_end_ns;  /* its last command ended on the device (from profiling) */
    uint64_t callback_ns; /* the OpenCL runtime told the daemon so */
};

/* The next done, waiting up to timeout_ms (0: do not wait, -1: wait forever).
 * Returns 0 with *done filled, -EAGAIN (timeout 0) or -ETIMEDOUT when none came.
 * If the daemon went away, each frame in flight comes back FRAMECL_FRAME_LOST and the
 * library reconnects, registers the buffers and reopens the sessions, under the same
 * ids. Reconnecting is done by the next call that talks to the daemon, including this
 * one unless timeout_ms is 0; it is retried for up to the connect timeout after the
 * loss, and once per call after that. While it fails, calls return -ENOTCONN, this one
 * too (even with -1) once no done is left. */
int framecl_next_done(framecl_client* client, int timeout_ms, struct framecl_done* done);

/* The statistics of the frame whose done framecl_next_done() returned last
 * (framecl/statistics.h; docs/filters.md, "Statistics"): 0 with *statistics filled, or
 * -ENODATA where that frame brought none (its pipeline makes none, or it did not run). */
int framecl_done_statistics(const framecl_client* client, struct framecl_statistics* statistics);

/* The daemon's statistics as JSON (docs/protocol.md). *json is the caller's to free(). */
int framecl_stats(framecl_client* client, char** json);

/* Traces the daemon's GPU work for the next `seconds` (1 to 60) and returns it as Chrome
 * trace JSON (docs/protocol.md, TraceRequest), which Perfetto opens. Waits up to
 * `seconds` plus the request timeout, since the daemon answers when the window closes;
 * dones that arrive meanwhile are kept for framecl_next_done(), and framecl_fd() says
 * so. *json is the caller's to free(). */
int framecl_trace(framecl_client* client, uint32_t seconds, char** json);

#ifdef __cplusplus
}
#endif

#endif /* FRAMECL_CLIENT_H */
