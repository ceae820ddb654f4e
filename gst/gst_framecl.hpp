#pragma once
// The `framecl` element: a GstBaseTransform that sends each frame through a framecld
// pipeline (docs/gstreamer.md).

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_FRAMECL (gst_framecl_get_type())
G_DECLARE_FINAL_TYPE(GstFramecl, gst_framecl, GST, FRAMECL, GstBaseTransform)

G_END_DECLS
