// The GStreamer plugin: registers the `framecl` element and its debug category.

#include <gst/gst.h>

#include "debug_category.hpp"
#include "framecl_build_config.h"
#include "gst_framecl.hpp"

GST_DEBUG_CATEGORY(gst_framecl_debug);

namespace {

gboolean pluginInit(GstPlugin* plugin)
{
    GST_DEBUG_CATEGORY_INIT(gst_framecl_debug, "framecl", 0, "framecl: frames filtered by framecld");
    return gst_element_register(plugin, "framecl", GST_RANK_NONE, GST_TYPE_FRAMECL);
}

} // namespace

// GST_PLUGIN_DEFINE wants PACKAGE as a macro, and a licence from GStreamer's list
// (gst_plugin_check_license): MIT is spelled "MIT/X11" there. The origin names the
// project, which has no public URL.
#define PACKAGE "framecl"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, framecl, "Camera frames filtered on the GPU by framecld",
                  pluginInit, FRAMECL_VERSION, "MIT/X11", "framecl", "framecl")
