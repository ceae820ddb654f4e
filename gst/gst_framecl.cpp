#include "gst_framecl.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include <gst/video/video.h>

#include "daemon_link.hpp"
#include "debug_category.hpp"
#include "input_frames.hpp"
#include "frame_pool.hpp"
#include "memory_registry.hpp"
#include "session_table.hpp"
#include "video_formats.hpp"

namespace framecl::gst {
namespace {

// As libframecl's own default, and the CLI's --timeout.
constexpr int default_timeout_ms = 5000;

} // namespace

// What the element holds besides GObject's fields: made in init, freed in finalize.
struct ElementState {
    // The properties, under the object lock.
    std::string pipeline;
    std::string socket; // empty: $FRAMECL_SOCKET, else FRAMECL_DEFAULT_SOCKET
    int timeout_ms = default_timeout_ms;

    MemoryRegistry registry;

    // From start() to stop(), under the object lock: caps queries come from any thread.
    std::shared_ptr<DaemonLink> link;
    std::shared_ptr<SessionTable> sessions;

    // From set_caps(): the streaming thread's alone, and stop() runs once it has stopped.
    uint32_t session = 0;
    GstVideoInfo output_info;
    std::unique_ptr<InputFrames> inputs;
};

} // namespace framecl::gst

using framecl::gst::ElementState;

struct _GstFramecl {
    GstBaseTransform parent;
    ElementState* state;
};

G_DEFINE_TYPE(GstFramecl, gst_framecl, GST_TYPE_BASE_TRANSFORM)

namespace {

using namespace framecl::gst;
using framecl::fail;
using framecl::Result;

enum { PROP_0, PROP_PIPELINE, PROP_SOCKET, PROP_TIMEOUT_MS };

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(FRAMECL_GST_FORMATS)));
GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(FRAMECL_GST_FORMATS)));

ElementState& stateOf(GstBaseTransform* trans)
{
    return *GST_FRAMECL(trans)->state;
}

std::shared_ptr<SessionTable> currentSessions(GstBaseTransform* trans)
{
    GST_OBJECT_LOCK(trans);
    auto sessions = stateOf(trans).sessions;
    GST_OBJECT_UNLOCK(trans);
    return sessions;
}

// The session framecld opens for frames of fixed `caps`; `*asked` as sessionFor() says.
Result<OpenedSession> sessionForCaps(SessionTable& sessions, GstCaps* caps, bool* asked)
{
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps))
        return fail("the caps are not complete video caps");
    const uint32_t fourcc = fourccOf(GST_VIDEO_INFO_FORMAT(&info));
    if (fourcc == 0)
        return fail(fmt::format("framecl takes no {} frames", gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info))));
    return sessions.sessionFor(fourcc, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), asked);
}

void framecl_set_property(GObject* object, guint id, const GValue* value, GParamSpec* spec)
{
    ElementState& state = *GST_FRAMECL(object)->state;
    GST_OBJECT_LOCK(object);
    switch (id) {
    case PROP_PIPELINE:
        state.pipeline = g_value_get_string(value) ? g_value_get_string(value) : "";
        break;
    case PROP_SOCKET:
        state.socket = g_value_get_string(value) ? g_value_get_string(value) : "";
        break;
    case PROP_TIMEOUT_MS:
        state.timeout_ms = g_value_get_int(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
    }
    GST_OBJECT_UNLOCK(object);
}

void framecl_get_property(GObject* object, guint id, GValue* value, GParamSpec* spec)
{
    const ElementState& state = *GST_FRAMECL(object)->state;
    GST_OBJECT_LOCK(object);
    switch (id) {
    case PROP_PIPELINE:
        g_value_set_string(value, state.pipeline.empty() ? nullptr : state.pipeline.c_str());
        break;
    case PROP_SOCKET:
        g_value_set_string(value, state.socket.empty() ? nullptr : state.socket.c_str());
        break;
    case PROP_TIMEOUT_MS:
        g_value_set_int(value, state.timeout_ms);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
    }
    GST_OBJECT_UNLOCK(object);
}

// Connecting here, not at construction, picks up a daemon restarted since the last
// run whenever the element goes from READY to PAUSED again.
gboolean framecl_start(GstBaseTransform* trans)
{
    GST_OBJECT_LOCK(trans);
    const std::string pipeline = stateOf(trans).pipeline;
    const std::string socket = stateOf(trans).socket;
    const int timeout_ms = stateOf(trans).timeout_ms;
    GST_OBJECT_UNLOCK(trans);

    if (pipeline.empty()) {
        GST_ELEMENT_ERROR(trans, LIBRARY, SETTINGS, ("No framecl pipeline chosen."),
                          ("set the pipeline property to one framecld offers, e.g. pipeline=copy"));
        return FALSE;
    }
    auto link = DaemonLink::connect(socket, timeout_ms);
    if (!link) {
        GST_ELEMENT_ERROR(trans, RESOURCE, OPEN_READ_WRITE, ("Could not connect to framecld."), ("%s",
                          link.error().message.c_str()));
        return FALSE;
    }
    if (auto offered = (*link)->requirePipeline(pipeline); !offered) {
        GST_ELEMENT_ERROR(trans, RESOURCE, SETTINGS, ("No framecl pipeline '%s'.", pipeline.c_str()),
                          ("%s", offered.error().message.c_str()));
        return FALSE;
    }
    auto sessions = std::make_shared<SessionTable>(*link, pipeline);
    GST_OBJECT_LOCK(trans);
    stateOf(trans).link = *link;
    stateOf(trans).sessions = std::move(sessions);
    GST_OBJECT_UNLOCK(trans);
    return TRUE;
}

gboolean framecl_stop(GstBaseTransform* trans)
{
    ElementState& state = stateOf(trans);
    state.inputs.reset();
    GST_OBJECT_LOCK(trans);
    std::shared_ptr<DaemonLink> link = std::move(state.link);
    std::shared_ptr<SessionTable> sessions = std::move(state.sessions);
    GST_OBJECT_UNLOCK(trans);
    sessions.reset();
    // Buffers still held downstream keep the link object, closed: freeing them later
    // releases nothing on a connection that is gone.
    if (link)
        link->close();
    return TRUE;
}

// Sink to source: what framecld makes of fixed input caps, learnt by opening a session
// on them; unfixed caps (and source to sink, which a pipeline cannot be run backwards
// to answer) allow any format and size framecl takes.
GstCaps* framecl_transform_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps, GstCaps* filter)
{
    GstCaps* result = nullptr;
    auto sessions = currentSessions(trans);
    if (direction == GST_PAD_SINK && sessions && gst_caps_is_fixed(caps)) {
        bool asked = false;
        auto session = sessionForCaps(*sessions, caps, &asked);
        if (session)
            result = capsFor(session->output, gst_caps_get_structure(caps, 0));
        else {
            // Negotiation fails with a bare "not-negotiated" from upstream. The daemon's
            // reason goes on the bus here, once per input; a warning, since upstream
            // may still settle on an input that the pipeline takes.
            if (asked)
                GST_ELEMENT_WARNING(trans, CORE, NEGOTIATION, ("framecld refused an input format."),
                                    ("%s", session.error().message.c_str()));
            result = gst_caps_new_empty();
        }
    } else {
        GstPad* other = direction == GST_PAD_SINK ? GST_BASE_TRANSFORM_SRC_PAD(trans) : GST_BASE_TRANSFORM_SINK_PAD(trans);
        result = gst_pad_get_pad_template_caps(other);
    }
    if (filter) {
        GstCaps* filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(result);
        result = filtered;
    }
    GST_DEBUG_OBJECT(trans, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                     direction == GST_PAD_SINK ? "sink" : "src", caps, result);
    return result;
}

gboolean framecl_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps)
{
    ElementState& state = stateOf(trans);
    auto sessions = currentSessions(trans);
    GstVideoInfo input_info, output_info;
    if (!sessions || !gst_video_info_from_caps(&input_info, incaps) || !gst_video_info_from_caps(&output_info, outcaps))
        return FALSE;
    // A refusal was posted by framecl_transform_caps(), which asked first.
    auto session = sessions->keepOnly(fourccOf(GST_VIDEO_INFO_FORMAT(&input_info)), GST_VIDEO_INFO_WIDTH(&input_info),
                                      GST_VIDEO_INFO_HEIGHT(&input_info));
    if (!session)
        return FALSE;
    const framecl_frame_layout& output = session->output;
    if (fourccOf(GST_VIDEO_INFO_FORMAT(&output_info)) != output.fourcc ||
        guint(GST_VIDEO_INFO_WIDTH(&output_info)) != output.width ||
        guint(GST_VIDEO_INFO_HEIGHT(&output_info)) != output.height) {
        GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION, ("Output caps do not match what the framecl pipeline makes."),
                          ("the pipeline makes %s %ux%u, the output caps are %" GST_PTR_FORMAT,
                           framecl_format_name(output.fourcc), output.width, output.height, outcaps));
        return FALSE;
    }
    GST_OBJECT_LOCK(trans);
    auto link = state.link;
    GST_OBJECT_UNLOCK(trans);
    auto inputs = InputFrames::create(input_info, link, state.registry);
    if (!inputs) {
        GST_ELEMENT_ERROR(trans, RESOURCE, NO_SPACE_LEFT, ("Could not prepare input frames."),
                          ("%s", inputs.error().message.c_str()));
        return FALSE;
    }
    state.session = session->id;
    state.output_info = output_info;
    state.inputs = std::move(*inputs);
    GST_INFO_OBJECT(trans, "session %u: %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, session->id, incaps, outcaps);
    return TRUE;
}

// A pool of frames framecld shares (dma-bufs, else sealed memfds) for `caps`,
// `min_buffers` made at once, with video metas if `video_meta`.
GstBufferPool* framePool(GstCaps* caps, guint min_buffers, guint max_buffers, bool video_meta)
{
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps))
        return nullptr;
    GstBufferPool* pool = gst_framecl_frame_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), min_buffers, max_buffers);
    if (video_meta)
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config)) {
        gst_object_unref(pool);
        return nullptr;
    }
    return pool;
}

// Output frames always come from the element's own pool, whatever pool downstream
// offered: framecld writes into them, and downstream sees their fds.
gboolean framecl_decide_allocation(GstBaseTransform* trans, GstQuery* query)
{
    GstCaps* caps = nullptr;
    gst_query_parse_allocation(query, &caps, nullptr);
    guint size = 0, min_buffers = 0, max_buffers = 0;
    const bool offered = gst_query_get_n_allocation_pools(query) > 0;
    if (offered)
        gst_query_parse_nth_allocation_pool(query, 0, nullptr, &size, &min_buffers, &max_buffers);
    // One frame downstream holds (a sink's last frame) and one being written.
    min_buffers = std::max(min_buffers, 2u);
    const bool video_meta = gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
    GstBufferPool* pool = caps ? framePool(caps, min_buffers, max_buffers, video_meta) : nullptr;
    if (!pool) {
        GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION, ("Could not make a pool of output frames."),
                          ("the output caps %" GST_PTR_FORMAT " are not fixed video caps", caps));
        return FALSE;
    }
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_get_params(config, nullptr, &size, nullptr, nullptr);
    gst_structure_free(config);
    if (offered)
        gst_query_set_nth_allocation_pool(query, 0, pool, size, min_buffers, max_buffers);
    else
        gst_query_add_allocation_pool(query, pool, size, min_buffers, max_buffers);
    gst_object_unref(pool);
    return TRUE;
}

// Upstream is offered frames of the same kind: a producer that writes into them
// hands framecld its frames without the element's copy.
// The base class passes a decide query only in passthrough, which the element never is.
gboolean framecl_propose_allocation(GstBaseTransform* trans, GstQuery* /*decide_query*/, GstQuery* query)
{
    GstCaps* caps = nullptr;
    gboolean need_pool = FALSE;
    gst_query_parse_allocation(query, &caps, &need_pool);
    if (!caps)
        return FALSE;
    gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
    if (!need_pool)
        return TRUE;
    GstBufferPool* pool = framePool(caps, 2, 0, false);
    if (!pool) {
        GST_DEBUG_OBJECT(trans, "no pool proposed for %" GST_PTR_FORMAT, caps);
        return TRUE;
    }
    GstVideoInfo info;
    gst_video_info_from_caps(&info, caps);
    gst_query_add_allocation_pool(query, pool, GST_VIDEO_INFO_SIZE(&info), 2, 0);
    gst_object_unref(pool);
    return TRUE;
}

GstFlowReturn framecl_prepare_output_buffer(GstBaseTransform* trans, GstBuffer* input, GstBuffer** output)
{
    const GstFlowReturn flow =
        GST_BASE_TRANSFORM_CLASS(gst_framecl_parent_class)->prepare_output_buffer(trans, input, output);
    if (flow == GST_FLOW_ERROR) {
        GstBufferPool* pool = gst_base_transform_get_buffer_pool(trans);
        gchar* error = pool ? gst_framecl_frame_pool_dup_last_error(pool) : g_strdup("no output pool");
        GST_ELEMENT_ERROR(trans, RESOURCE, NO_SPACE_LEFT, ("No output frame buffer."), ("%s", error));
        g_free(error);
        if (pool)
            gst_object_unref(pool);
    }
    return flow;
}

GstFlowReturn framecl_transform(GstBaseTransform* trans, GstBuffer* input, GstBuffer* output)
{
    ElementState& state = stateOf(trans);
    GST_OBJECT_LOCK(trans);
    auto link = state.link;
    GST_OBJECT_UNLOCK(trans);

    auto input_frame = state.inputs->frameOf(input);
    if (!input_frame) {
        GST_ELEMENT_ERROR(trans, STREAM, FAILED, ("Could not hand an input frame to framecld."),
                          ("%s", input_frame.error().message.c_str()));
        return GST_FLOW_ERROR;
    }
    auto output_layout = layoutOf(output, state.output_info);
    auto output_id = output_layout.and_then([&](const framecl_frame_layout& layout) {
        return state.registry.idFor(gst_buffer_peek_memory(output, 0), layout, link);
    });
    if (!output_id) {
        GST_ELEMENT_ERROR(trans, STREAM, FAILED, ("Could not hand an output frame to framecld."),
                          ("%s", output_id.error().message.c_str()));
        return GST_FLOW_ERROR;
    }
    if (auto processed = link->process(state.session, input_frame->id, *output_id); !processed) {
        GST_ELEMENT_ERROR(trans, RESOURCE, FAILED, ("framecld did not process a frame."),
                          ("%s", processed.error().message.c_str()));
        return GST_FLOW_ERROR;
    }
    return GST_FLOW_OK;
}

void framecl_finalize(GObject* object)
{
    delete GST_FRAMECL(object)->state;
    G_OBJECT_CLASS(gst_framecl_parent_class)->finalize(object);
}

} // namespace

static void gst_framecl_class_init(GstFrameclClass* klass)
{
    GObjectClass* object_class = G_OBJECT_CLASS(klass);
    object_class->set_property = framecl_set_property;
    object_class->get_property = framecl_get_property;
    object_class->finalize = framecl_finalize;

    const auto flags = GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
    g_object_class_install_property(
        object_class, PROP_PIPELINE,
        g_param_spec_string("pipeline", "Pipeline", "The framecld pipeline each frame goes through, e.g. copy",
                            nullptr, flags));
    g_object_class_install_property(
        object_class, PROP_SOCKET,
        g_param_spec_string("socket", "Socket",
                            "framecld's socket; unset: $FRAMECL_SOCKET, else " FRAMECL_DEFAULT_SOCKET, nullptr,
                            flags));
    g_object_class_install_property(
        object_class, PROP_TIMEOUT_MS,
        g_param_spec_int("timeout-ms", "Timeout (ms)",
                         "Longest wait for framecld: to connect, for each request and for each frame", 1, G_MAXINT,
                         default_timeout_ms, flags));

    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    gst_element_class_set_static_metadata(element_class, "framecl", "Filter/Effect/Video",
                                          "Filters frames on the GPU through a framecld pipeline",
                                          "framecl developers");
    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);

    GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
    transform_class->start = framecl_start;
    transform_class->stop = framecl_stop;
    transform_class->transform_caps = framecl_transform_caps;
    transform_class->set_caps = framecl_set_caps;
    transform_class->decide_allocation = framecl_decide_allocation;
    transform_class->propose_allocation = framecl_propose_allocation;
    transform_class->prepare_output_buffer = framecl_prepare_output_buffer;
    transform_class->transform = framecl_transform;
}

static void gst_framecl_init(GstFramecl* self)
{
    self->state = new ElementState();
}
