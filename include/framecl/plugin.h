/* framecl filter plugins: the ABI between framecld and a plugin shared object.
 *
 * A plugin describes; the daemon executes. It exports one function,
 * framecl_plugin_descriptor(), returning a constant descriptor whose first field is
 * the ABI version. The daemon checks that version before reading anything else, then
 * reads the parameter schema, builds the kernel files, and for each pipeline stage
 * asks `negotiate` (which output format an input format gives) and `plan` (which
 * dispatches one frame takes). No OpenCL handle crosses this boundary: that is what
 * lets the daemon record, tile and place intermediates on-chip without the plugin
 * knowing. Strings and structs the plugin returns are copied by the daemon at once.
 *
 * docs/plugin-guide.md walks through writing one. */
#ifndef FRAMECL_PLUGIN_H
#define FRAMECL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <framecl/format.h>
#include <framecl/statistics.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the structs below. The daemon loads this version and the
 * older ones down to FRAMECL_PLUGIN_ABI_OLDEST, whose descriptors are this one's first
 * fields (5 added param_block, FRAMECL_ARG_PARAMS and FRAMECL_ARG_STATISTICS; 6 added
 * pointwise; 7 added framecl_pointwise's fused_loads), and refuses any other. */
#define FRAMECL_PLUGIN_ABI_VERSION 7
#define FRAMECL_PLUGIN_ABI_OLDEST 4

/* The one symbol a plugin exports. */
#define FRAMECL_PLUGIN_ENTRY "framecl_plugin_descriptor"

/* ---- Parameters ------------------------------------------------------------------ */

enum framecl_param_type {
    FRAMECL_PARAM_TYPE_INT = 0,         /* integer in [min, max] */
    FRAMECL_PARAM_TYPE_FLOAT = 1,       /* real in [min, max]; an integer in TOML is accepted */
    FRAMECL_PARAM_TYPE_BOOL = 2,
    FRAMECL_PARAM_TYPE_ENUM = 3,        /* one string of `allowed` */
    FRAMECL_PARAM_TYPE_FLOAT_LIST = 4,  /* 1 to max_count reals, each in [min, max] */
};

struct framecl_param_schema {
    const char* name;
    enum framecl_param_type type;
    const char* help;
    double default_number;       /* INT, FLOAT, BOOL (0 or 1) */
    const char* default_string;  /* ENUM */
    double min;                  /* INT, FLOAT, FLOAT_LIST */
    double max;
    const char* const* allowed;  /* ENUM: NULL-terminated */
    uint32_t max_count;          /* FLOAT_LIST */
};

/* A parameter's value for one stage, after the daemon checked it against the schema
 * and filled in defaults. The plugin receives one per schema entry, in schema order.
 * A FLOAT_LIST the stage does not set has no default: list_count is 0, list NULL. */
struct framecl_param_value {
    int64_t int_value;          /* INT, BOOL */
    double float_value;         /* FLOAT */
    const char* string_value;   /* ENUM */
    const double* list;         /* FLOAT_LIST */
    uint32_t list_count;
};

/* ---- Formats and plans ----------------------------------------------------------- */

struct framecl_format {
    uint32_t fourcc;
    uint32_t width;
    uint32_t height;
};

/* What one kernel argument is bound to. INPUT_PLANE, OUTPUT_PLANE, INTERMEDIATE and STATE
 * take THREE consecutive kernel arguments: (__global buffer, uint byte offset of the
 * plane, uint stride in bytes); the others one.
 *
 * The *_IMAGE kinds bind an image2d_t (guide §6.2: 2-D reads through the texture path)
 * whose channels are the plane's unsigned integers, read with read_imageui and written
 * with write_imageui: an R8 plane or NV12's Y is CL_R of CL_UNSIGNED_INT8; NV12's UV
 * plane too, byte by byte (its width is the frame's: Cb at even x, Cr at odd, as CL_RG
 * is not on every device); ABGR8888 is CL_RGBA (bytes R, G, B, A), R16 CL_R of
 * CL_UNSIGNED_INT16.
 * An INPUT_IMAGE is read-only. The daemon fills it without a copy where the previous
 * stage wrote it as an image (framecl_plan_request); otherwise it copies the plane into
 * an image first, a dispatch of its own counted in the stage's time. A plan's
 * intermediate bound as INTERMEDIATE_IMAGE anywhere is an image throughout (one
 * dispatch writes it write_only, a later one reads it read_only) and may not also be
 * bound as INTERMEDIATE. */
enum framecl_arg_kind {
    FRAMECL_ARG_INPUT_PLANE = 0,  /* `index`: plane of the stage's input frame */
    FRAMECL_ARG_OUTPUT_PLANE = 1, /* `index`: plane of the stage's output frame */
    FRAMECL_ARG_INTERMEDIATE = 2, /* `index`: intermediate of this plan; plane 0 */
    FRAMECL_ARG_UINT = 3,         /* `uint_value` */
    FRAMECL_ARG_INT = 4,          /* `int_value` */
    FRAMECL_ARG_FLOAT = 5,        /* `float_value` */
    FRAMECL_ARG_LOCAL = 6,        /* `local_bytes` of __local memory */
    FRAMECL_ARG_CONSTANT = 7,     /* `index`: constant of this plan, as a read-only
                                   * buffer (__constant or __global const) */
    FRAMECL_ARG_INPUT_IMAGE = 8,  /* `index`: plane of the stage's input, as an image */
    FRAMECL_ARG_OUTPUT_IMAGE = 9, /* `index`: plane of the stage's output, as an image;
                                   * only where the request asks for it */
    FRAMECL_ARG_INTERMEDIATE_IMAGE = 10, /* `index`: intermediate of this plan, as an image */
    FRAMECL_ARG_STATE = 11,       /* `index`: state buffer of this plan; plane 0 */
    FRAMECL_ARG_PARAMS = 12,      /* the stage's parameter block (param_block), as a
                                   * read-only buffer (__global const); ABI 5 */
    FRAMECL_ARG_STATISTICS = 13,  /* the frame's statistics: a struct framecl_statistics
                                   * (framecl/statistics.h) of uints (__global uint*),
                                   * zeroed before the frame's first dispatch and handed
                                   * to the client with its Done. Kernels add to it with
                                   * atomic_add: tiles of one dispatch run in any order.
                                   * One stage of a pipeline at most; ABI 5 */
};

struct framecl_arg {
    enum framecl_arg_kind kind;
    uint32_t index;
    uint32_t uint_value;
    int32_t int_value;
    float float_value;
    uint32_t local_bytes;
};

#define FRAMECL_MAX_ARGS 24
#define FRAMECL_MAX_DISPATCHES 8
#define FRAMECL_MAX_INTERMEDIATES 4
#define FRAMECL_MAX_CONSTANTS 2
#define FRAMECL_MAX_CONSTANT_BYTES 1024
#define FRAMECL_MAX_STATES 2
#define FRAMECL_MAX_PARAM_BLOCK_BYTES 16384

/* Bits of framecl_dispatch.tileable_axes: the axes along which the daemon may split
 * the dispatch into tiles (with global offsets) to bound each one's GPU time. */
#define FRAMECL_AXIS_X 1u
#define FRAMECL_AXIS_Y 2u

struct framecl_dispatch {
    const char* kernel;       /* kernel function name */
    uint32_t kernel_file;     /* index into the descriptor's kernel_files */
    uint32_t dims;            /* 1 or 2 */
    size_t global[2];         /* work items; the daemon rounds up to the local size */
    size_t local_hint[2];     /* 0: let the daemon choose */
    uint32_t tileable_axes;
    uint32_t arg_count;
    struct framecl_arg args[FRAMECL_MAX_ARGS];
};

/* A buffer private to the stage, tightly packed in `format` (a single-plane format). */
struct framecl_intermediate {
    struct framecl_format format;
};

/* A buffer the session keeps from one frame to the next (the previous input, a running
 * average), tightly packed in `format` (a single-plane format). The daemon allocates it
 * when the session opens, in device memory: never on-chip, whose contents last only for
 * one enqueue of a recording (guide §9.1.6). It holds zero bytes before the session's
 * first frame, and again before the frame submitted next after one that did not run to
 * its end (dropped, expired, refused or failed): a kernel tells that it has no history by
 * a word it sets in its state itself. The frame's dispatches run in plan order, and a
 * frame's first dispatch after the previous frame's last, so each frame sees what the
 * frame before it left. docs/plugin-guide.md, "State across frames". */
struct framecl_state {
    struct framecl_format format;
};

/* Data a stage's kernels read and no frame changes, such as a filter's weights: the
 * daemon copies the first `size` bytes into a read-only device buffer when the session
 * opens. Write values with memcpy, in the device's byte order (little-endian on every
 * GPU framecld meets). */
struct framecl_constant {
    uint32_t size;
    uint8_t bytes[FRAMECL_MAX_CONSTANT_BYTES];
};

/* What the daemon asks of a plan besides its input and parameters. */
struct framecl_plan_request {
    /* Bit p set: the next stage reads plane p of this stage's output as an image. The
     * plan may then write that plane with FRAMECL_ARG_OUTPUT_IMAGE, and the daemon holds
     * it as an image, so nothing is copied between the stages; a plan that writes it
     * with OUTPUT_PLANE as usual is answered with a copy. Set only for single-plane
     * outputs, and never for the pipeline's last stage. */
    uint32_t output_image_planes;
};

struct framecl_plan {
    uint32_t intermediate_count;
    struct framecl_intermediate intermediates[FRAMECL_MAX_INTERMEDIATES];
    uint32_t dispatch_count;
    struct framecl_dispatch dispatches[FRAMECL_MAX_DISPATCHES];
    uint32_t constant_count;
    struct framecl_constant constants[FRAMECL_MAX_CONSTANTS];
    uint32_t state_count;
    struct framecl_state states[FRAMECL_MAX_STATES];
};

/* ---- Fusable stages (ABI 6; fused_loads ABI 7) ------------------------------------ */

/* A stage whose every output pixel is a function of the input pixel at the same place
 * alone (or of the pixels of one 2x2 block alone) may say so, with that function as
 * OpenCL C in one of its kernel files. The daemon may then fuse it with the stages next
 * to it that say so too: one kernel, built by the daemon, loads each pixel once, applies
 * the stages' functions in turn and stores the last one's output, and nothing goes to
 * memory in between (docs/plugin-guide.md, "Fusable stages"). The stage's own plan runs
 * wherever it is not fused, and must give the same bytes.
 *
 * A pointwise function's signature is fixed:
 *
 *     void name(__private uint4* pixels, uint x, uint y, __global const uchar* params)
 *
 * `pixels` holds block_width x block_height pixels, row by row, of the stage's input,
 * and the function replaces them with its output's; (x, y) is the block's top-left pixel
 * in the frame; `params` is the stage's parameter block (param_block; NULL where it has
 * none). A pixel is a uint4 of its channels' codes, each in its format's range:
 *   R8, R16                   (value, 0, 0, 0)
 *   ABGR8888, ABGR16161616    (R, G, B, A)
 *   NV12                      (Y, Cb, Cr, 0), Cb and Cr those of the pixel's 2x2 block;
 *                             an NV12 output takes them from the block's first pixel.
 * An output value outside its format's range is cut to the format's bits as C's
 * conversion to the unsigned type does. Other formats are not fused.
 *
 * A stage that reads a neighbourhood of its input (a stencil) may still begin a fused
 * run, the pointwise stages after it computing on its output block before anything is
 * stored: it sets `reads_input`, and its function reads the stage's input planes itself
 * and fills the block of its output at (x, y):
 *
 *     void name(__global const uchar* in0, uint in0_offset, uint in0_stride,
 *               __global const uchar* in1, uint in1_offset, uint in1_stride,
 *               uint width, uint height, uint x, uint y,
 *               __private uint4* pixels, __global const uchar* params)
 *
 * (in0 and in1 are the input's planes, plane 0 twice for a single-plane format; width
 * and height are the input's, its output's the same). Its input may be any format.
 *
 * ABI 7: a stencil may instead end a run, the pointwise stages before it fused into its
 * loads: it sets `fused_loads` (`function` may then stay NULL), and its plan's kernels
 * that read the input plane read each pixel through framecl_fused_input where the
 * program defines FRAMECL_FUSED_INPUT as 1 (kernels/prelude.cl, which defines it 0 and
 * the daemon redefines it in front of the stage's kernel file for a fused build):
 *
 *     uint4 framecl_fused_input(in0, in0_offset, in0_stride FRAMECL_FUSED_ARGS, uint x, uint y)
 *
 * returns the stage's input pixel at (x, y), inside the frame, computed from the run's
 * input; such a kernel appends FRAMECL_FUSED_PARAMS to its parameters and hands
 * FRAMECL_FUSED_ARGS on to whatever calls framecl_fused_input. Its borders and vector
 * loads stay its own; the daemon appends the arguments to its dispatches. The stencil's
 * input must be a format of the list above and its plan must not read an image. */
struct framecl_pointwise {
    const char* function;  /* NULL: no function (the stage is not fusable unless fused_loads) */
    uint32_t kernel_file;  /* index into the descriptor's kernel_files */
    uint32_t block_width;  /* 1 or 2, with block_height the same */
    uint32_t block_height;
    uint32_t reads_input;  /* 0: pointwise; 1: a stencil that may begin a run */
    uint32_t fused_loads;  /* ABI 7. 1: a stencil whose loads take the stages before it */
};

/* ---- The descriptor ---------------------------------------------------------------- */

struct framecl_plugin {
    uint32_t abi_version; /* FRAMECL_PLUGIN_ABI_VERSION: first, always */
    const char* name;     /* as written in a [[pipeline]] stage: plugin = "name" */
    const char* version;
    const char* description;
    uint32_t param_count;
    const struct framecl_param_schema* params;
    uint32_t kernel_file_count;
    const char* const* kernel_files; /* found in daemon.kernel_dirs */
    const char* build_options;       /* for clBuildProgram; may be NULL */

    /* The output format for `in` with `params` (one per schema entry). Returns 0, or
     * non-zero with a message in `error` ("input must be ABGR8888, got NV12"). `in` is
     * always a format framecld holds (R8, R16, ABGR8888, ABGR16161616, NV12, the Bayer
     * formats of framecl/format.h) at a size it allows (even sides for NV12 and Bayer, a
     * width that is a multiple of 4 for packed RAW10), with every plane's stride and
     * offset within 32 bits. */
    int (*negotiate)(const struct framecl_format* in, const struct framecl_param_value* params,
                     struct framecl_format* out, char* error, size_t error_size);

    /* The dispatches of one frame of `in` (a format negotiate accepted), in order.
     * `plan` arrives zeroed. Returns 0, or non-zero with a message in `error`. */
    int (*plan)(const struct framecl_format* in, const struct framecl_param_value* params,
                const struct framecl_plan_request* request, struct framecl_plan* plan, char* error,
                size_t error_size);

    /* ABI 5; may be NULL. The stage's parameter block: the bytes its kernels read through
     * FRAMECL_ARG_PARAMS, made from its parameters (gains, a matrix, a curve sampled into
     * a table), so that the numbers a camera's control loop moves live in a buffer the
     * session's recording reads rather than in arguments it captured
     * (docs/plugin-guide.md, "Parameter blocks"). Writes its bytes into `block`
     * (`block_size` of them, FRAMECL_MAX_PARAM_BLOCK_BYTES, arrive zeroed) and their count
     * into `*used` (at least 1), and returns 0; or non-zero with a message in `error`.
     * `in` is a format negotiate accepted with `params`. Called when a session opens,
     * after plan; the daemon copies the bytes into a read-only device buffer. Keep the
     * plan the same for any values of what the block holds, and the block the same size. */
    int (*param_block)(const struct framecl_format* in, const struct framecl_param_value* params,
                       uint8_t* block, uint32_t block_size, uint32_t* used, char* error, size_t error_size);

    /* ABI 6; may be NULL (never fused). Whether the stage is fusable for `in` (a format
     * negotiate accepted) with `params`, and its function: fills `pointwise`
     * (which arrives zeroed; leave it so for no) and returns 0, or non-zero
     * with a message in `error`. The answer may depend on the parameters (a filter
     * pointwise in one mode and not in another) but not on what the parameter block
     * holds: the stage's plan and its pointwise answer stay the same while a frame's
     * parameters change the block. */
    int (*pointwise)(const struct framecl_format* in, const struct framecl_param_value* params,
                     struct framecl_pointwise* pointwise, char* error, size_t error_size);
};

typedef const struct framecl_plugin* (*framecl_plugin_entry)(void);

/* Defined by each plugin. Declared here so that the compiler checks a plugin's
 * definition against this type and exports it even under -fvisibility=hidden. */
__attribute__((visibility("default"))) const struct framecl_plugin* framecl_plugin_descriptor(void);

#ifdef __cplusplus
}
#endif

#endif /* FRAMECL_PLUGIN_H */
